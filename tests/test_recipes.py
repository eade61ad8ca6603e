"""The recipes in docs/recipes/ name only what exists, and quote the code as it is.

Each recipe is read as tests/test_design.py reads DESIGN.md (paths, ``path.py: name``, ``package.module.Name``,
parameters of a call), and every fenced block whose first line is a comment naming a file (``# path/to/file.py``)
is a quotation: its lines, in pieces between lines that are only ``...``, are found in that file as written. A
recipe that names a file or a name that is gone, or quotes code that changed, fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_design import AFTER_ISSUE_40, ROOT, mentions, problems

RECIPES = sorted((ROOT / "docs" / "recipes").glob("*.md"))
FENCE = re.compile(r"^```[\w-]*\n(.*?)^```", re.M | re.S)
QUOTED = re.compile(r"#\s*(?P<path>[\w./-]+\.(?:py|toml|yml))\s*$")


def quotations(text: str) -> list[tuple[int, str, list[str]]]:
    """(line, file, pieces) for each quoted block: the pieces are the runs of lines between ``...`` lines."""
    found = []
    for block in FENCE.finditer(text):
        first, _, body = block.group(1).partition("\n")
        named = QUOTED.fullmatch(first.strip())
        if not named:
            continue
        pieces = [p.strip("\n") for p in re.split(r"^[ \t]*\.\.\.[ \t]*$", body, flags=re.M)]
        found.append((text.count("\n", 0, block.start()) + 1, named["path"], [p for p in pieces if p.strip()]))
    return found


def quotation_problems(text: str, *, doc: str) -> list[str]:
    """What is wrong with the quotations of ``doc``: a file that is not there, a piece not in it as written."""
    out = []
    for line, path, pieces in quotations(text):
        if not (ROOT / path).is_file():
            if path not in AFTER_ISSUE_40:
                out.append(f"{doc}:{line}: quotes {path}, which is not there")
            continue
        source = (ROOT / path).read_text(encoding="utf-8")
        out += [f"{doc}:{line}: {path} no longer reads:\n{piece}" for piece in pieces if piece not in source]
    return out


def test_there_are_the_three_recipes() -> None:
    assert [p.name for p in RECIPES] == ["add-a-command.md", "add-a-platform.md", "add-a-result.md"]


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.name)
def test_a_recipe_names_only_what_exists(recipe: Path) -> None:
    text = recipe.read_text(encoding="utf-8")
    found = mentions(text)
    assert len(found) >= 10, f"{recipe.name} should name the files and names it asks you to touch"
    wrong = problems(found, doc=f"docs/recipes/{recipe.name}")
    assert not wrong, "a recipe names what does not exist (fix the recipe, or the code):\n" + "\n".join(wrong)


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.name)
def test_a_recipe_quotes_the_code_as_it_is(recipe: Path) -> None:
    text = recipe.read_text(encoding="utf-8")
    assert len(quotations(text)) >= 3, f"{recipe.name} should show its worked example from the code"
    wrong = quotation_problems(text, doc=f"docs/recipes/{recipe.name}")
    assert not wrong, "a recipe quotes code that changed (quote it again):\n" + "\n".join(wrong)


def test_a_doctored_recipe_fails_on_a_gone_file_a_gone_name_and_a_changed_quotation() -> None:
    real = (ROOT / "docs" / "recipes" / "add-a-command.md").read_text(encoding="utf-8")
    doctored = (
        real.replace("`bot_commands/converters.py`", "`bot_commands/convert.py`")
        .replace("`bot_commands.commands.default_registry`", "`bot_commands.commands.all_commands`")
        .replace("    return OrdersListing(data=await context.client.list_orders())", "    return OrdersListing()")
    )
    assert doctored.count("\n") == real.count("\n") and doctored != real
    said = problems(mentions(doctored), doc="doctored.md") + quotation_problems(doctored, doc="doctored.md")
    assert len(said) == 3, said
    assert "there is no bot_commands/convert.py" in said[0]
    assert "bot_commands/commands.py defines no all_commands" in said[1]
    assert "bot_commands/commands.py no longer reads:\n" in said[2] and "return OrdersListing()" in said[2]


def test_a_quotation_of_a_file_that_is_gone_fails() -> None:
    text = (
        "```python\n# bot_commands/gone.py\ndef f() -> None: ...\n```\n```python\n# petstore_bot/runtime.py\nx\n```\n"
    )
    said = quotation_problems(text, doc="doc.md")
    assert said[0] == "doc.md:1: quotes bot_commands/gone.py, which is not there"
    assert len(said) == 1 or (ROOT / "petstore_bot/runtime.py").exists()  # issue 40's paths wait for its merge
