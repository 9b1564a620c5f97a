package io.txcommit.maintenance

/** What VACUUM was asked to do. */
final case class VacuumOptions(retainHours: Double = Vacuum.DefaultRetainHours, dryRun: Boolean = false,
    force: Boolean = false)
