"""What trying and testing txcommit on one machine needs, outside the core wheel (the
``txcommit-devkit`` distribution, with ``txcommit.bench``): the emulators' process support, a
proxy that loses answers, a latency model of S3 and the stores' test kits."""
