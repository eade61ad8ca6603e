"""DESIGN.md names only what exists, draws the imports the code has, and stays a page a newcomer reads in an hour.

What is checked, in the text outside fenced blocks (the same checker keeps the recipes in docs/recipes/ honest:
tests/test_recipes.py):
- a code span that is a path ending in ``.py`` or ``/`` (``petstore_api/client.py``, ``tui/widgets/``) exists; a bare
  module name (``errors.py``) is read in the package its section's heading names (``## ... — `petstore_api/` ``);
- ``path.py: name`` in one span, or a path span, a colon and a span beginning with a name (`` `client.py`:
  `PetStoreClient(...)` ``): the module defines that name (a function, class or constant, found with ast; a dotted
  name is a class and its member); imported names do not count;
- that second span, when it reads as a call (``Name(a, *, b=None)``): each parameter it names is a parameter of the
  function, or of the class (its ``__init__``, else its annotated fields);
- a dotted name that starts with one of our packages (``bot_commands.results.WhoAmI``, ``petstore_bot.transport``):
  the module exists and defines the rest.

And in DESIGN.md as a whole: at most :data:`MAX_WORDS` words; the import graph (the Mermaid flowchart under "Import
direction") is exactly the graph of imports between our packages; the picture of a running bot process names each
of its tasks.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from test_layers import PRODUCT, _static_imports

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "DESIGN.md"
#: The map is read in an hour: figures go to bench/README.md, the why of a module to its docstring.
MAX_WORDS = 3000

# ---------------------------------------------------------------------------------------------------------------
# AFTER ISSUE 40 — the one place that names what the map and the recipes describe before it is merged: paths that
# may be missing on this branch (the bot runtime moves into petstore_bot/runtime.py; IRC and XMPP are one module
# each). Once they exist (after the merge), `test_names_waiting_for_issue_40_are_still_missing` fails: empty this
# set then, and every name the texts give for them is checked like any other.
AFTER_ISSUE_40: frozenset[str] = frozenset()
# ---------------------------------------------------------------------------------------------------------------

SPAN = re.compile(r"`([^`]+)`")
PATH = re.compile(r"[A-Za-z_][\w.-]*(?:/[\w.-]+)*(?:\.py|/)")
NAMED = re.compile(rf"(?P<path>{PATH.pattern}):\s*(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
LEADING_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
DOTTED = re.compile(r"(?P<first>[a-z_]\w*)(?:\.[A-Za-z_]\w*)+")
HEADING = re.compile(r"^#{2,}\s.*$", re.M)
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


@dataclass(frozen=True)
class Mention:
    line: int
    text: str  # the span(s) as written, for the message
    path: str  # as resolved against the section's package
    name: str | None = None
    params: str | None = None  # what is between the parentheses of ``Name(...)``


def _blank_fences(text: str) -> str:
    """The text with fenced blocks blanked out, line breaks kept (so offsets keep their line numbers)."""
    return FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _section_packages(text: str) -> list[tuple[int, str | None]]:
    """(offset, package folder or None) for each heading: the first span in it that names an existing folder."""
    out: list[tuple[int, str | None]] = [(0, None)]
    for heading in HEADING.finditer(text):
        folders = [s for s in SPAN.findall(heading.group(0)) if s.endswith("/") and (ROOT / s).is_dir()]
        out.append((heading.start(), folders[0] if folders else None))
    return out


def _resolve(path: str, package: str | None) -> str:
    return f"{package}{path}" if "/" not in path and path.endswith(".py") and package else path


def _params(span: str, name_end: int) -> str | None:
    """The text inside ``Name(...)``'s parentheses when the span goes on with one right after the name."""
    if span[name_end : name_end + 1] != "(":
        return None
    depth = 0
    for at in range(name_end, len(span)):
        depth += {"(": 1, ")": -1}.get(span[at], 0)
        if depth == 0:
            return span[name_end + 1 : at]
    return None


def mentions(text: str) -> list[Mention]:
    text = _blank_fences(text)
    sections = _section_packages(text)
    spans = [(m, " ".join(m.group(1).split())) for m in SPAN.finditer(text)]
    found: list[Mention] = []
    for index, (match, span) in enumerate(spans):
        package = next(p for offset, p in reversed(sections) if offset <= match.start())
        line = text.count("\n", 0, match.start()) + 1
        named = NAMED.fullmatch(span)
        if named:
            found.append(Mention(line, span, _resolve(named["path"], package), named["name"]))
            continue
        dotted = _dotted(span)
        if dotted:
            found.append(Mention(line, span, *dotted))
            continue
        if not PATH.fullmatch(span) or span.startswith(("/", ".")):
            continue
        path = _resolve(span, package)
        after = text[match.end() : match.end() + 3]
        following = spans[index + 1] if index + 1 < len(spans) else None
        if span.endswith(".py") and following and re.fullmatch(r":\s*", text[match.end() : following[0].start()]):
            leading = LEADING_NAME.match(following[1])
            if leading and not PATH.fullmatch(following[1]):
                params = _params(following[1], leading.end())
                text_shown = f"`{span}`{after[:1]} `{following[1]}`"
                found.append(Mention(line, text_shown, path, leading.group(0), params))
                continue
        found.append(Mention(line, span, path))
    return found


def _dotted(span: str) -> tuple[str, str | None] | None:
    """(module path, name in it or None) for ``package.module.Name``, a dotted name starting with one of our
    packages: the longest prefix that is a module file holds the rest; a package named whole is its folder."""
    if not DOTTED.fullmatch(span) or span.split(".")[0] not in PRODUCT:
        return None
    parts = span.split(".")
    if (ROOT / "/".join(parts)).is_dir():
        return "/".join(parts) + "/", None
    for cut in range(len(parts), 1, -1):
        if (ROOT / f"{'/'.join(parts[:cut])}.py").is_file():
            return f"{'/'.join(parts[:cut])}.py", ".".join(parts[cut:]) or None
    return f"{parts[0]}/{parts[1]}.py", None  # no such module: reported as a missing file


@cache
def _module(path: str) -> ast.Module:
    return ast.parse((ROOT / path).read_text(encoding="utf-8"))


def _defined(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """Names a module or class body defines (functions, classes, assignments), inside if/try blocks too."""
    names: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.If | ast.Try):
            for block in (node.body, node.orelse, getattr(node, "finalbody", [])):
                names.update(_defined(block))
    return names


def _parameters(node: ast.AST) -> set[str] | None:
    """The parameter names of a function, or of a class (``__init__``, else its annotated fields)."""
    if isinstance(node, ast.ClassDef):
        members = _defined(node.body)
        init = members.get("__init__")
        if init is not None:
            return _parameters(init)
        return {n for n, d in members.items() if isinstance(d, ast.AnnAssign)}
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        a = node.args
        every = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]
        return {arg.arg for arg in every} - {"self", "cls"}
    return None


def _named_params(params: str) -> list[str]:
    """The parameter names a ``Name(...)`` span spells: ``a``, ``b: int``, ``c=None``; not ``*``, ``...``, types."""
    names = []
    depth = 0
    for piece in re.split(r"([(),\[\]])", params):
        if piece in "([":
            depth += 1
        elif piece in ")]":
            depth -= 1
        elif depth == 0 and piece != ",":
            word = re.match(r"\s*\*{0,2}([a-z_]\w*)\s*(?:[:=]|$)", piece)
            if word:
                names.append(word.group(1))
    return names


def problems(found: list[Mention], *, doc: str = "DESIGN.md") -> list[str]:
    """What is wrong with each mention of ``doc`` (paths in :data:`AFTER_ISSUE_40` may be missing, with what they
    are said to define)."""
    out = []
    for m in found:
        where = f"{doc}:{m.line}: `{m.text}`" if not m.text.startswith("`") else f"{doc}:{m.line}: {m.text}"
        if m.path in AFTER_ISSUE_40 and not (ROOT / m.path).exists():
            continue
        if not (ROOT / m.path).exists():
            bare = "/" not in m.path and " (a bare module name is read in the folder its section's heading names)"
            out.append(f"{where}: there is no {m.path}{bare or ''}")
            continue
        if m.name is None:
            continue
        if (ROOT / m.path).is_dir():
            continue
        node: ast.AST | None = None
        scope = _defined(_module(m.path).body)
        owner = m.path
        for part in m.name.split("."):
            node = scope.get(part)
            if node is None:
                defined = ", ".join(sorted(n for n in scope if not n.startswith("__"))[:40])
                out.append(f"{where}: {owner} defines no {part} (it defines: {defined})")
                break
            owner = f"{owner}: {part}"
            scope = _defined(node.body) if isinstance(node, ast.ClassDef) else {}
        if node is None or m.params is None:
            continue
        real = _parameters(node)
        if real is None:
            continue
        wrong = [p for p in _named_params(m.params) if p not in real]
        if wrong:
            out.append(
                f"{where}: {m.name} has no parameter {', '.join(wrong)} (its parameters: {', '.join(sorted(real))})"
            )
    return out


def test_design_names_only_what_exists() -> None:
    found = mentions(DESIGN.read_text(encoding="utf-8"))
    assert len(found) > 50, "DESIGN.md should name the modules it describes"
    wrong = problems(found)
    assert not wrong, "DESIGN.md names what does not exist (fix the text, or the code):\n" + "\n".join(wrong)


def test_the_checker_reads_each_form() -> None:
    text = (
        "## The client — `petstore_api/`\n"
        "- `client.py`: `PetStoreClient(*, base_url, api_key=None, nonsense=1)` and `models.py: Pet`\n"
        "- `nowhere.py`: gone; `petstore_api/errors.py: NoSuchError`; `tui/widgets/`\n"
        "```\n`ignored.py`\n```\n"
        "## Faces\n"
        "- `tui/screens/main.py: MainScreen.no_such_method`, `bot_commands/session.py`: `CommandSession(client)`\n"
    )
    found = mentions(text)
    assert [(m.line, m.path, m.name) for m in found] == [
        (1, "petstore_api/", None),
        (2, "petstore_api/client.py", "PetStoreClient"),
        (2, "petstore_api/models.py", "Pet"),
        (3, "petstore_api/nowhere.py", None),
        (3, "petstore_api/errors.py", "NoSuchError"),
        (3, "tui/widgets/", None),
        (8, "tui/screens/main.py", "MainScreen.no_such_method"),
        (8, "bot_commands/session.py", "CommandSession"),
    ]
    said = "\n".join(problems(found))
    assert "PetStoreClient has no parameter nonsense" in said
    assert "there is no petstore_api/nowhere.py" in said
    assert "petstore_api/errors.py defines no NoSuchError" in said
    assert "tui/screens/main.py: MainScreen defines no no_such_method" in said
    assert len(problems(found)) == 4


def test_design_is_a_page_read_in_an_hour() -> None:
    words = len(DESIGN.read_text(encoding="utf-8").split())
    assert words <= MAX_WORDS, f"DESIGN.md has {words} words (at most {MAX_WORDS}): move the why to docstrings"


MERMAID = re.compile(r"^```mermaid\n(.*?)^```", re.M | re.S)
EDGE = re.compile(r"^\s*(\w+)\s*-->\s*(\w+)\s*$", re.M)


def _section(text: str, title: str) -> str:
    """The text of the ``## title`` section, up to the next heading of its level."""
    start = re.search(rf"^## {re.escape(title)}\n", text, re.M)
    assert start, f"DESIGN.md has no section '## {title}'"
    end = re.search(r"^## ", text[start.end() :], re.M)
    return text[start.end() : start.end() + end.start() if end else len(text)]


def drawn_imports(text: str) -> set[tuple[str, str]]:
    """The edges of the first Mermaid flowchart of the "Import direction" section."""
    chart = MERMAID.search(_section(text, "Import direction"))
    assert chart, "the import direction is drawn as a Mermaid flowchart"
    return set(EDGE.findall(chart.group(1)))


def actual_imports() -> set[tuple[str, str]]:
    """(importer, imported) for every import between two of our packages, lazy ones too."""
    edges = set()
    for package in PRODUCT:
        for path in (ROOT / package).rglob("*.py"):
            edges |= {(package, other) for other in _static_imports(path) & set(PRODUCT) if other != package}
    return edges


def test_the_import_diagram_is_the_graph_of_the_code() -> None:
    drawn, actual = drawn_imports(DESIGN.read_text(encoding="utf-8")), actual_imports()
    assert actual - drawn == set(), f"imports DESIGN.md does not draw (add them, or drop the import): {actual - drawn}"
    assert drawn - actual == set(), f"arrows DESIGN.md draws that no module imports: {drawn - actual}"


def test_the_bot_process_is_drawn_with_each_task() -> None:
    charts = MERMAID.findall(_section(DESIGN.read_text(encoding="utf-8"), "A running bot process"))
    assert charts, "a running bot process is drawn as a Mermaid flowchart"
    tasks = ["Transport.run", "BotCore", "expiry sweep", "notifier", "approvals poster", "finisher", "lease", "pruning"]
    assert [task for task in tasks if task not in charts[0]] == []
    assert "stop" in charts[0] and "SIGTERM" in charts[0]


def test_names_waiting_for_issue_40_are_still_missing() -> None:
    """The switch of AFTER_ISSUE_40: a path in it that exists now is checked like any other once taken out."""
    present = sorted(path for path in AFTER_ISSUE_40 if (ROOT / path).exists())
    assert present == [], f"{present} exist now: take them out of AFTER_ISSUE_40 in tests/test_design.py"


def test_the_checker_reads_dotted_names_and_waits_for_issue_40() -> None:
    text = (
        "`bot_commands.results.WhoAmI`, `bot_commands.results.NoSuchResult`, `petstore_bot.transport`,\n"
        "`petstore_bot.no_such_module.Name`, `pathlib.Path`, `petstore_bot/runtime.py`\n"
    )
    found = mentions(text)
    assert [(m.path, m.name) for m in found] == [
        ("bot_commands/results.py", "WhoAmI"),
        ("bot_commands/results.py", "NoSuchResult"),
        ("petstore_bot/transport.py", None),
        ("petstore_bot/no_such_module.py", None),
        ("petstore_bot/runtime.py", None),
    ]
    said = problems(found, doc="doc.md")
    assert said[0].startswith("doc.md:1: `bot_commands.results.NoSuchResult`: bot_commands/results.py defines no")
    assert said[1].startswith(
        "doc.md:2: `petstore_bot.no_such_module.Name`: there is no petstore_bot/no_such_module.py"
    )
    assert len(said) == 2 or (ROOT / "petstore_bot/runtime.py").exists()


def test_the_import_check_sees_an_arrow_too_many_and_one_missing() -> None:
    text = "## Import direction\n```mermaid\nflowchart TD\n    tui --> bot_commands\n    tui --> petstore_api\n```\n"
    drawn = drawn_imports(text)
    assert drawn == {("tui", "bot_commands"), ("tui", "petstore_api")}
    actual = actual_imports()
    assert ("tui", "petstore_api") in drawn - actual and ("petstore_bot", "bot_commands") in actual - drawn
