"""The store contract is written once, in the doc comment of ``CommitStore.scala``; the copy in
docs/adapters.md must say the same. ``python python/tests/unit/test_contract_docs.py`` rewrites
the copy from the doc comment."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TRAIT = ROOT / "plugin-jvm/src/main/scala/io/txcommit/store/CommitStore.scala"
DOCS = ROOT / "docs/adapters.md"
BEGIN = "<!-- The store contract: copied from CommitStore.scala's doc comment. -->"
END = "<!-- End of the store contract. -->"


def contract_of_trait(source: str) -> str:
    """The numbered points of the trait's doc comment, as Markdown: Scaladoc links become code
    spans of the simple name, the comment's margin goes."""
    comment = source[source.index("/**") : source.index("*/\ntrait CommitStore")]
    lines = [re.sub(r"^ \* ?", "", line) for line in comment.splitlines()[1:]]
    first = next(i for i, line in enumerate(lines) if re.match(r" 1\. ", line))
    points = [line[1:] if line.startswith(" ") else line for line in lines[first:]]
    text = "\n".join(points).rstrip() + "\n"
    return re.sub(r"\[\[(?:[\w.]+\.)?(\w+)\]\]", r"`\1`", text)


def docs_with(docs: str, contract: str) -> str:
    """docs/adapters.md with ``contract`` between its markers."""
    if BEGIN not in docs or END not in docs:
        raise SystemExit(f"{DOCS} lacks the markers {BEGIN!r} and {END!r} around the contract")
    head, rest = docs.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{contract}{END}{tail}"


def test_the_docs_state_the_contract_of_the_trait() -> None:
    docs = DOCS.read_text()
    expected = docs_with(docs, contract_of_trait(TRAIT.read_text()))
    assert docs == expected, (
        f"the store contract in {DOCS.name} differs from the doc comment of {TRAIT.name}: edit "
        f"the doc comment, then run `python {Path(__file__).relative_to(ROOT)}` to copy it"
    )


def test_the_contract_names_members_the_trait_has() -> None:
    source = TRAIT.read_text()
    contract = contract_of_trait(source)
    assert len(re.findall(r"^\d+\. ", contract, flags=re.M)) == 8, contract
    for member in set(re.findall(r"`(\w+)\(", contract)):
        assert re.search(rf"\bdef {member}\b", source), f"`{member}(`: not a member of the trait"


if __name__ == "__main__":
    DOCS.write_text(docs_with(DOCS.read_text(), contract_of_trait(TRAIT.read_text())))
    sys.exit(0)
