"""What a face was asked to print (``--format``, ``--json``, ``--fields``, ``--jq``, ``--template``) and the writer
of the machine formats (:mod:`.formats` is the contract: records, never prose, on stdout).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from petstore_os.records import record

from .formats import (
    FORMATS,
    Data,
    JqProgram,
    OutputError,
    Record,
    Template,
    compile_jq,
    data_of,
    jq_lines,
    parse_fields,
    select,
    to_csv,
    to_json,
    to_tsv,
    truncation,
)
from .outcome import Outcome
from .results import Result
from .views import BlankView, NoticeView, notes_of, present

__all__ = ["LINE_OPTIONS", "MachineWriter", "OutputSpec", "output_spec", "records_of", "split_output_options"]


@record
class OutputSpec:
    """The output asked for: a format of :data:`FORMATS`, the fields to keep, a jq filter or a template."""

    fmt: str = "table"
    fields: tuple[str, ...] = ()
    jq: JqProgram | None = None
    template: Template | None = None

    @property
    def machine(self) -> bool:
        """Records on stdout, prose on stderr (csv, tsv, json, jsonl)."""
        return self.fmt in ("tsv", "csv", "json", "jsonl")


def output_spec(
    *,
    fmt: str | None = None,
    json_lines: bool = False,
    fields: str | None = None,
    jq: str | None = None,
    template: str | None = None,
) -> OutputSpec:
    """The spec of the options as typed; a combination that cannot be honoured is an :class:`OutputError`.

    ``--jq`` and ``--template`` work on the records of ``--format json`` (which they imply), as gh's do.
    """
    if json_lines:
        if fmt not in (None, "jsonl"):
            raise OutputError(f"--json is --format jsonl; it cannot be combined with --format {fmt}")
        fmt = "jsonl"
    if fmt is not None and fmt not in FORMATS:
        raise OutputError(f"unknown format '{fmt}'; one of: {', '.join(FORMATS)}")
    if jq is not None and template is not None:
        raise OutputError("--jq and --template cannot be combined: choose one")
    if jq is not None or template is not None:
        option = "--jq" if jq is not None else "--template"
        if fmt not in (None, "json"):
            raise OutputError(f"{option} works on the records of --format json, not --format {fmt}")
        fmt = "json"
    return OutputSpec(
        fmt=fmt or "table",
        fields=parse_fields(fields) if fields is not None else (),
        jq=compile_jq(jq) if jq is not None else None,
        template=Template.parse(template) if template is not None else None,
    )


def records_of(result: Result, fields: tuple[str, ...] = ()) -> Data | None:
    """The records of ``result`` with ``--fields`` applied (an :class:`OutputError` for a field it has not)."""
    data = data_of(result)
    return select(data, fields) if data is not None and fields else data


@dataclass
class MachineWriter:
    """Writes each result in a machine format: ``out`` gets the data, ``note`` every word of prose.

    ``--format json`` collects the records of every command into one array, printed by :meth:`finish` (through
    ``--jq`` when asked); ``--template`` prints each record as it comes.
    """

    spec: OutputSpec
    out: Callable[[str], None]
    note: Callable[[str], None]
    records: list[Record] = field(default_factory=list)

    def result(self, outcome: Outcome) -> None:
        """Print one successful command's result."""
        result = outcome.result
        assert result is not None
        for text in notes_of(result):
            self.note(text)
        data = records_of(result, self.spec.fields)
        shown = present(result, one_shot=True)
        if data is None or (not data.records and not data.fields):  # prose, or nothing of a known shape
            if not isinstance(shown.view, BlankView):
                self.note(shown.view.text if isinstance(shown.view, NoticeView) else shown.summary)
            return
        if truncation(result):  # the caption is not data: say it where a person sees it
            self.note(f"note: {shown.summary}")
        if self.spec.fmt == "json":
            self._json(data)
        else:
            self.out(to_csv(data) if self.spec.fmt == "csv" else to_tsv(data))

    def _json(self, data: Data) -> None:
        if self.spec.template is not None:
            template = self.spec.template
            self.out("".join(template.render(item) + "\n" for item in data.records))
        else:
            self.records.extend(data.records)

    def finish(self) -> None:
        """The array of ``--format json`` (or what ``--jq`` makes of it), once every command has run."""
        if self.spec.fmt != "json" or self.spec.template is not None:
            return
        if self.spec.jq is not None:
            self.out(jq_lines(self.spec.jq, list(self.records)))
        else:
            self.out(to_json(self.records))


#: The output options a chat line may carry (``/list sold --format csv``): option -> whether it takes a value.
LINE_OPTIONS = {"--format": True, "--fields": True, "--jq": True, "--template": True, "--json": False}


def split_output_options(line: str) -> tuple[str, OutputSpec | None]:
    """``/list sold --format csv`` -> ``("/list sold", OutputSpec(fmt="csv"))``: the line without its output
    options, and the spec they ask for (None when there are none). A bad combination is an :class:`OutputError`;
    a line that does not tokenize is left for the registry to explain."""
    from .errors import UsageError
    from .parser import join_command, tokenize

    try:
        words = tokenize(line)
    except UsageError:
        return line, None
    if not words or not any(word.split("=", 1)[0] in LINE_OPTIONS for word in words[1:]):
        return line, None
    given: dict[str, str | None] = {}
    rest: list[str] = []
    index = 1
    while index < len(words):
        word = words[index]
        name, eq, value = word.partition("=")
        if word == "--":
            rest += words[index:]
            break
        if name not in LINE_OPTIONS:
            rest.append(word)
        elif not LINE_OPTIONS[name]:
            given[name] = ""
        elif eq:
            given[name] = value
        elif index + 1 < len(words):
            given[name] = words[index + 1]
            index += 1
        else:
            raise OutputError(f"{name} needs a value")
        index += 1
    spec = output_spec(
        fmt=given.get("--format"),
        json_lines="--json" in given,
        fields=given.get("--fields"),
        jq=given.get("--jq"),
        template=given.get("--template"),
    )
    return join_command(words[0], *rest), spec
