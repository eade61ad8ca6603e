"""DESIGN.md names only what exists: every module or folder it mentions, and every name it says a module defines.

What is checked, in the text outside fenced blocks:
- a code span that is a path ending in ``.py`` or ``/`` (``petstore_api/client.py``, ``tui/widgets/``) exists; a bare
  module name (``errors.py``) is read in the package its section's heading names (``## ... — `petstore_api/` ``);
- ``path.py: name`` in one span, or a path span, a colon and a span beginning with a name (`` `client.py`:
  `PetStoreClient(...)` ``): the module defines that name (a function, class or constant, found with ast; a dotted
  name is a class and its member); imported names do not count;
- that second span, when it reads as a call (``Name(a, *, b=None)``): each parameter it names is a parameter of the
  function, or of the class (its ``__init__``, else its annotated fields).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "DESIGN.md"

SPAN = re.compile(r"`([^`]+)`")
PATH = re.compile(r"[A-Za-z_][\w.-]*(?:/[\w.-]+)*(?:\.py|/)")
NAMED = re.compile(rf"(?P<path>{PATH.pattern}):\s*(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
LEADING_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
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


def problems(found: list[Mention]) -> list[str]:
    out = []
    for m in found:
        where = f"DESIGN.md:{m.line}: `{m.text}`" if not m.text.startswith("`") else f"DESIGN.md:{m.line}: {m.text}"
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
