"""``petstore completion bash|zsh|fish``: completion scripts generated from argparse and the registry.

:func:`spec` reads what to offer from the two sources that define the command line: the
argparse parser (faces, their options, ``--env``/``--format`` choices, positional choices) and
the registry (every command as a subcommand with its summary, flags and status values). The
three renderers only spell that out in each shell's language; nothing is listed twice.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import dataclass, field

from bot_commands.arguments import CompletionContext
from bot_commands.commands import default_registry
from bot_commands.registry import Command

__all__ = ["CompletionSpec", "bash_script", "completion_main", "fish_script", "spec", "zsh_script"]


@dataclass
class Sub:
    """One subcommand: its summary, its flags, the values of its first argument, files or not."""

    summary: str
    aliases: tuple[str, ...] = ()
    flags: list[str] = field(default_factory=list)
    values: list[str] = field(default_factory=list)
    files: bool = False


@dataclass
class CompletionSpec:
    """What to complete: global flags, each subcommand, the values of flags that take one."""

    global_flags: list[str]
    subs: dict[str, Sub]
    flag_values: dict[str, list[str]]
    takes_value: set[str]
    file_flags: set[str]


def _actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's actions, those hidden from --help left out (``tui --web-actor``: set by ``petstore web``)."""
    return [action for action in parser._actions if action.help is not argparse.SUPPRESS]


def _subparsers(parser: argparse.ArgumentParser) -> tuple[dict[str, argparse.ArgumentParser], dict[str, str]]:
    for action in _actions(parser):
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            return dict(action.choices), helps
    return {}, {}


def _learn(spec: CompletionSpec, action: argparse.Action) -> None:
    if action.nargs == 0 or not action.option_strings:
        return
    for option in action.option_strings:
        spec.takes_value.add(option)
        if action.choices:
            spec.flag_values[option] = [str(c) for c in action.choices]
        if action.metavar in ("FILE", "PATH|URL", "FILE|-", "SCRIPT|-", "SCRIPT"):
            spec.file_flags.add(option)


def _command_sub(cmd: Command, spec: CompletionSpec, names: list[str], shared: list[str]) -> Sub:
    sub = Sub(summary=cmd.summary, aliases=cmd.aliases, flags=[*(a.flag for a in cmd.args if a.flag), *shared])
    context = CompletionContext(positional=(), ids=(), names=names)
    for arg in cmd.args:
        values = list(arg.choices(context)) if callable(arg.choices) else list(arg.choices)
        if arg.flag:
            if not arg.switch:
                spec.takes_value.add(arg.flag)
            if values:
                spec.flag_values[arg.flag] = values
        elif not sub.values:
            sub.values = values
    return sub


def spec(parser: argparse.ArgumentParser) -> CompletionSpec:
    """What the completion scripts offer, from ``parser`` (petstore's) and the registry."""
    from .options import output_options

    result = CompletionSpec(global_flags=[], subs={}, flag_values={}, takes_value=set(), file_flags=set())
    for action in _actions(parser):
        result.global_flags += [o for o in action.option_strings if o.startswith("--")]
        _learn(result, action)
    faces, helps = _subparsers(parser)
    for name, sub_parser in faces.items():
        sub = Sub(summary=helps.get(name, ""))
        for action in _actions(sub_parser):
            sub.flags += [o for o in action.option_strings if o.startswith("--")]
            _learn(result, action)
            if not action.option_strings and action.choices:
                sub.values = [str(c) for c in action.choices]
            elif not action.option_strings and action.metavar == "SCRIPT|-":
                sub.files = True
        result.subs[name] = sub
    shared = [o for a in _actions(output_options()) for o in a.option_strings if o.startswith("--")]
    shared += [f for f in result.global_flags if f not in ("--help", "--version")]
    from tui.themes import theme_names

    result.flag_values["--theme"] = theme_names()
    registry = default_registry()
    one_shot = [c for c in registry.commands() if c.one_shot]  # petstore more, quit ... cannot work
    names = [c.name for c in one_shot]
    for cmd in one_shot:
        if cmd.name not in result.subs:
            result.subs[cmd.name] = _command_sub(cmd, result, names, shared)
    return result


# --------------------------------------------------------------------------- bash


def _words(values: list[str] | set[str]) -> str:
    return shlex.quote(" ".join(sorted(values) if isinstance(values, set) else values))


def bash_script(s: CompletionSpec) -> str:
    value_cases = "".join(
        f'        {flag}) COMPREPLY=($(compgen -W {_words(values)} -- "$cur")); return;;\n'
        for flag, values in sorted(s.flag_values.items())
    )
    file_flags = "|".join(sorted(s.file_flags))
    free = "|".join(sorted(s.takes_value - set(s.flag_values) - s.file_flags))
    takes = "|".join(sorted(s.takes_value))
    sub_cases = ""
    for name, sub in s.subs.items():
        pattern = "|".join((name, *sub.aliases))
        files = " files=1;" if sub.files else ""
        sub_cases += f"        {pattern}) opts={_words(sub.flags)}; args={_words(sub.values)};{files};\n"
    names = [n for name, sub in s.subs.items() for n in (name, *sub.aliases)]
    return f"""# bash completion for petstore (generated by: petstore completion bash)
_petstore_files() {{
    # As file names: a folder ends in / with no space after it, so Tab goes on into it.
    compopt -o filenames 2>/dev/null
    local IFS=$'\\n'
    COMPREPLY=($(compgen -f -- "$cur"))
}}
_petstore() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    local cmd="" i opts="" args="" files=0
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${{COMP_WORDS[i]}}" in
            {takes}) ((i++)) ;;
            -*) ;;
            *) cmd="${{COMP_WORDS[i]}}"; break ;;
        esac
    done
    case "$prev" in
{value_cases}        {file_flags}) _petstore_files; return;;
        {free}) COMPREPLY=(); return;;
    esac
    if [[ -z "$cmd" ]]; then
        if [[ "$cur" == -* ]]; then
            COMPREPLY=($(compgen -W {_words(s.global_flags)} -- "$cur"))
        else
            COMPREPLY=($(compgen -W {_words(names)} -- "$cur"))
        fi
        return
    fi
    case "$cmd" in
{sub_cases}    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif ((files)); then
        _petstore_files
    else
        COMPREPLY=($(compgen -W "$args" -- "$cur"))
    fi
}}
complete -F _petstore petstore
"""


# --------------------------------------------------------------------------- zsh


def _zq(text: str) -> str:
    """A zsh single-quoted word."""
    return "'" + text.replace("'", "'\\''") + "'"


def zsh_script(s: CompletionSpec) -> str:
    described = " ".join(_zq(f"{n}:{sub.summary}") for name, sub in s.subs.items() for n in (name, *sub.aliases))
    value_cases = "".join(
        f"    {flag}) compadd -- {' '.join(_zq(v) for v in values)}; return;;\n"
        for flag, values in sorted(s.flag_values.items())
    )
    sub_cases = ""
    for name, sub in s.subs.items():
        pattern = "|".join((name, *sub.aliases))
        files = " files=1;" if sub.files else ""
        opts = " ".join(_zq(f) for f in sub.flags)
        args = " ".join(_zq(v) for v in sub.values)
        sub_cases += f"    {pattern}) opts=({opts}); args=({args});{files};\n"
    takes = "|".join(sorted(s.takes_value))
    return f"""#compdef petstore
# zsh completion for petstore (generated by: petstore completion zsh)
_petstore() {{
  local -a subcommands opts args
  local cmd="" files=0 i=2
  subcommands=({described})
  while (( i < CURRENT )); do
    case ${{words[i]}} in
      {takes}) (( i += 2 )); continue ;;
      -*) ;;
      *) cmd=${{words[i]}}; break ;;
    esac
    (( i++ ))
  done
  case ${{words[CURRENT-1]}} in
{value_cases}    {"|".join(sorted(s.file_flags))}) _files; return;;
    {"|".join(sorted(s.takes_value - set(s.flag_values) - s.file_flags))}) return;;
  esac
  if [[ -z $cmd ]]; then
    if [[ ${{words[CURRENT]}} == -* ]]; then
      compadd -- {" ".join(_zq(f) for f in s.global_flags)}
    else
      _describe 'command' subcommands
    fi
    return
  fi
  case $cmd in
{sub_cases}  esac
  if [[ ${{words[CURRENT]}} == -* ]]; then
    compadd -- $opts
  elif (( files )); then
    _files
  else
    compadd -- $args
  fi
}}
if [[ "$funcstack[1]" == "_petstore" ]]; then
  _petstore "$@"
else
  compdef _petstore petstore
fi
"""


# --------------------------------------------------------------------------- fish


def _fq(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def fish_script(s: CompletionSpec) -> str:
    lines = ["# fish completion for petstore (generated by: petstore completion fish)", "complete -c petstore -f"]
    for name, sub in s.subs.items():
        for word in (name, *sub.aliases):
            lines.append(f"complete -c petstore -n __fish_use_subcommand -a {_fq(word)} -d {_fq(sub.summary)}")
    for name, sub in s.subs.items():
        seen = " ".join((name, *sub.aliases))
        cond = _fq(f"__fish_seen_subcommand_from {seen}")
        if sub.values:
            lines.append(f"complete -c petstore -n {cond} -a {_fq(' '.join(sub.values))}")
        if sub.files:
            lines.append(f"complete -c petstore -n {cond} -F")
        for flag in sub.flags:
            lines.append(f"complete -c petstore -n {cond} {_fish_flag(flag, s)}")
    lines += [f"complete -c petstore -n __fish_use_subcommand {_fish_flag(f, s)}" for f in s.global_flags]
    return "\n".join(lines) + "\n"


def _fish_flag(flag: str, s: CompletionSpec) -> str:
    out = f"-l {flag.removeprefix('--')}"
    if flag in s.flag_values:
        return out + f" -x -a {_fq(' '.join(s.flag_values[flag]))}"
    if flag in s.file_flags:
        return out + " -r -F"
    return out + (" -x" if flag in s.takes_value else "")


def completion_main(shell: str, *, parser: argparse.ArgumentParser) -> int:
    """Entry point of ``petstore completion SHELL``."""
    render = {"bash": bash_script, "zsh": zsh_script, "fish": fish_script}[shell]
    sys.stdout.write(render(spec(parser)))
    return 0
