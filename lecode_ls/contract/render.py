"""Generate docs/reference/protocol.md and the extension's protocol.ts from the method table,
and (through contract/settings.py) everything that describes the settings.

Run `uv run python -m lecode_ls.contract` after changing a method table
(`server/<feature>/methods.py`) or `config.py`; a test fails when the committed files differ from
what this renders.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TypeVar

from lecode_ls.contract import extensions
from lecode_ls.contract.fielddocs import field_docs
from lecode_ls.contract.settings import (
    PACKAGE_JSON,
    ROOT,
    SETTINGS_MD,
    SETTINGS_TS,
    VSCODE_README,
    render_package_json,
    render_settings_md,
    render_settings_typescript,
    render_vscode_readme,
)
from lecode_ls.contract.ts_types import ts_type
from lecode_ls.errors import LecodeError
from lecode_ls.server.messages import Message
from lecode_ls.server.method import Method
from lecode_ls.server.protocol import METHODS

T = TypeVar("T")

PROTOCOL_MD = ROOT / "docs" / "reference" / "protocol.md"
PROTOCOL_TS = ROOT / "editor" / "vscode" / "src" / "common" / "protocol.ts"

INTRO = """\
# lecode-ls protocol

lecode-ls speaks LSP over stdio (the default), `--pipe NAME` or `--socket PORT` (it connects to a
client that listens, as vscode-languageclient's pipe and socket transports do), or `--tcp HOST:PORT`
(it listens on a loopback address only and serves the first client alone). Besides the standard
lifecycle it serves the custom JSON-RPC methods below, so any LSP client can use the memory. This file is
generated from `lecode_ls/server/protocol.py` by `uv run python -m lecode_ls.contract`; a test
fails when the two disagree. The same memory is also served to other agents over the Model Context
Protocol by `lecode-ls mcp`: mcp.md documents its tools, resources and errors.

## Conventions

- JSON fields are camelCase. Params are strict: a missing field, an unknown field or a wrong type
  is refused.
- Every request takes an optional `workspaceUri`: any `file://` folder or file URI inside an open
  workspace folder. Without it the request is about the first workspace folder. All folders of one
  Git checkout (nested folders, linked worktrees) share one project memory; a submodule has its own.
- Settings come from `<config dir>/config.toml`, then from the editor: `initializationOptions` and
  `workspace/didChangeConfiguration` carry `{"lecode": {"memory": {...}}}` (or the inner object),
  with the same keys as config.toml.
- The notifications below are sent only to a client that names them in
  `initializationOptions.notifications` (a list of their method names, beside the settings).
- Command arguments are positional (`workspace/executeCommand`'s `arguments` array): each table
  below gives them by position, and a command whose argument is an object takes that object
  itself as `arguments[0]`.
- Questions to the person (a forget, a session's deletion, a permission) never wait inside the
  request that asked: such a command answers with a `question`, and the change is made when the
  answer comes. A client that advertised `window.showMessage` is asked with
  `window/showMessageRequest`; any other gets `window/showMessage` and two code actions in every
  document, which run `lecode.answer`. Only the explicit yes changes anything.
- One operation for every door. An LSP request, a chat tool (`memory_*`), a `/memory` line and an
  MCP tool that do the same thing run the same code (`lecode_ls/actions/`), so they agree: a
  fact remembered from any door whose text is `path contains "line"` and whose evidence shows
  that line read is anchored there; correcting a fact shared in the first folder's checkout
  rewrites its shared file whether `lecode/facts/correct`, `lecode/facts/correctSelection`,
  `memory_correct` or `/memory correct` corrected it; a listing is for the person
  (`lecode/facts/list`, `/memory facts`: the retirements proposed, and the facts shared, which
  `/memory facts` prints as `shared <teamId>`) or for the model (`memory_list`: neither, both
  being the person's to decide); the instruction files a prompt shows (AGENTS.md, `[agent]
  instruction_files`) are read alike for the chat and for other agents' hooks, and one that
  cannot be read (an AGENTS.md linking out of the checkout) is logged and left out, never a
  failed turn. Whatever changed is announced once, by the operation's own account:
  `lecode/facts/didChange` and `lecode/memory/didChange` follow a `/memory` line as they follow
  the request that does the same.

## Framing

Messages are framed as the LSP base protocol says: a header section of at most 8,192 bytes with
one `Content-Length` (other fields are ignored; the body is UTF-8 JSON), then the body, at most
67,108,864 bytes (64 MiB). A header section that breaks these rules, or a larger body, is answered
with -32700 and `id: null` and skipped: reading resumes at the next `Content-Length:`, so a broken
frame costs only itself. A body that is not UTF-8 JSON (NaN and Infinity included) gets -32700; a
batch, a non-object, a `jsonrpc` other than `"2.0"`, an `id` that is neither an integer nor a
string, or a non-string `method` gets -32600 (to the request's `id` where it can be read, else to
`id: null`); so does a body holding more than 2,000,000 of the characters `{ [ , :` (what a parse
would allocate is bounded before it starts: 64 MiB of `{}` would be 21 million objects). A
notification is never answered. After `shutdown`, every request but `exit` gets -32600.

## Errors

Every error is a JSON-RPC error response. `error.data.code` is a stable machine code; the message
is a sentence for people that names the field at fault. No traceback or installation path is ever
sent.

| JSON-RPC code | `data.code` | when |
|---|---|---|
| -32700 | | a frame or body that is not a JSON-RPC message (see Framing) |
| -32600 | | an invalid request object, or any request after `shutdown` |
| -32002 | | a request before `initialize` |
| -32602 | `invalid_params` | params do not match the schema (`data.field` names the first field) |
| -32800 | | the request was cancelled with `$/cancelRequest` |
| -32603 | `internal_error` | a fault inside the server (details only in the server log) |
| -32600 | `shut_down` | a request after `shutdown`: shutdown cancels running turns and compactions (each records its cancellation), closes the provider clients and every store |
"""


def _error_rows() -> str:
    rows = []
    used = {code for method in METHODS for code in method.errors}
    for cls in sorted(_all_errors(), key=lambda c: c.code):
        if cls.code not in used:
            continue
        doc = (cls.__doc__ or "").strip().splitlines()[0]
        rows.append(f"| {cls.rpc_code} | `{cls.code}` | {doc} |")
    return "\n".join(rows) + "\n"


def _all_errors() -> list[type[LecodeError]]:
    return _subclasses(LecodeError)


def undocumented_codes() -> set[str]:
    """Codes that methods list but no error class defines (a test keeps this empty)."""
    defined = {cls.code for cls in _all_errors()}
    return {code for method in METHODS for code in method.errors} - defined


def _subclasses(root: type[T]) -> list[type[T]]:
    """`root` and every class derived from it, at any depth."""
    found: list[type[T]] = []
    stack = [root]
    while stack:
        cls = stack.pop()
        found.append(cls)
        stack.extend(cls.__subclasses__())
    return found


# --- JSON schema to type names -------------------------------------------------------------


def _schema(model: type[Message], mode: str) -> dict[str, Any]:
    """The model's JSON schema, with each field's docstring as its description."""
    schema = model.model_json_schema(by_alias=True, mode=mode)  # type: ignore[arg-type]
    classes = {cls.__name__: cls for cls in _subclasses(Message)}
    for name, node in [(model.__name__, schema), *schema.get("$defs", {}).items()]:
        cls = classes.get(name)
        if cls is None:
            continue
        docs = field_docs(cls)
        for field_name, info in cls.model_fields.items():
            prop = node.get("properties", {}).get(info.alias or field_name)
            if prop is not None and field_name in docs:
                prop["description"] = docs[field_name]
        if cls.__doc__ and cls.__doc__ != Message.__doc__ and "description" not in node:
            node["description"] = " ".join(cls.__doc__.split())
    return schema


def _models(model: type[Message], mode: str) -> list[tuple[str, dict[str, Any]]]:
    """The model and every model it references, as (name, object schema), in a stable order."""
    schema = _schema(model, mode)
    defs = schema.pop("$defs", {})
    return [(model.__name__, schema), *sorted(defs.items())]


def _fields_table(name: str, schema: dict[str, Any]) -> str:
    props: dict[str, Any] = schema.get("properties", {})
    if not props:
        return f"`{name}`: no fields.\n"
    required = set(schema.get("required", []))
    lines = [f"`{name}`:", "", "| field | type | required | description |", "|---|---|---|---|"]
    for field, node in props.items():
        desc = " ".join(str(node.get("description", "")).split())
        flag = "yes" if field in required else "no"
        kind = ts_type(node).replace("|", "\\|")  # a bare | would end the table cell
        lines.append(f"| `{field}` | `{kind}` | {flag} | {desc} |")
    return "\n".join(lines) + "\n"


def _arguments_table(schema: dict[str, Any]) -> str:
    """A command's arguments: positional (`workspace/executeCommand` has no names), one row per
    field of its model in order, as wiring.parse maps them."""
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    lines = ["| argument | type | required | description |", "|---|---|---|---|"]
    for index, (field, node) in enumerate(props.items()):
        desc = " ".join(str(node.get("description", "")).split())
        kind = ts_type(node).replace("|", "\\|")
        flag = "yes" if field in required else "no"
        lines.append(f"| `arguments[{index}]` | `{kind}` | {flag} | {desc} |")
    return "\n".join(lines) + "\n"


def command_arguments(method: Method) -> list[tuple[str, str, bool]]:
    """(position, type, required) of each argument, as protocol.md's table shows them."""
    schema = _schema(method.params, "validation")
    required = set(schema.get("required", []))
    return [
        (f"arguments[{i}]", ts_type(node), field in required)
        for i, (field, node) in enumerate(schema.get("properties", {}).items())
    ]


def _method_md(method: Method) -> str:
    parts = [f"### `{method.name}` ({method.kind})", "", method.summary, ""]
    if method.kind == "command":
        parts.append("**Arguments** (positional)\n")
        (_, wrapper), *objects = _models(method.params, "validation")
        parts.append(_arguments_table(wrapper))
        for name, schema in objects:
            parts.append(_fields_table(name, schema))
    else:
        parts.append("**Params**\n")
        for name, schema in _models(method.params, "validation"):
            parts.append(_fields_table(name, schema))
    if method.result is not None:
        parts.append("**Result**\n")
        for name, schema in _models(method.result, "serialization"):
            parts.append(_fields_table(name, schema))
    if method.errors:
        parts.append("**Errors** (`data.code`): " + ", ".join(f"`{e}`" for e in method.errors))
        parts.append("")
    parts.append("**Example**\n")
    example = {"params" if method.kind != "command" else "arguments": method.example_params}
    if method.kind != "notification":
        example["result"] = method.example_result
    parts.append("```json\n" + json.dumps(example, indent=2) + "\n```\n")
    return "\n".join(parts)


SHARED_FILES = """## Shared-fact files (`.lecode/facts/<id>.json`, format version 1)

A fact shared with the team (`lecode/facts/share`) is a file in the repository, one a fact, so
that two people sharing two facts never touch one file. It is committed, reviewed and merged like
code: a fact shared on a branch is on that branch only until it merges, and each worktree reads
its own branch's. The file is written with sorted keys and two-space indents.

Any tool can read or write it. A reader verifies it on its own, without the session it came
from: `evidence.digest` is `sha256:` + hex of the canonical JSON (sorted keys, no whitespace,
UTF-8) of the array `evidence.records`, which holds every transcript record from the first
cited seq to the last; the cited records hold user or assistant text; a fact whose text reads
`path contains "<JSON line>"` bundles the `read` that showed that line; `repository` is a commit
the clone holds (the repository's root commit); anchor paths stay inside the checkout. lecode-ls
lists a file that fails any of these, or that holds a secret its detector finds, as
`unverified`, with the reason, and never shows it to a model. The digest shows that the bundle is
intact; it does not show who wrote the file, nor that its text is true (only a `path contains`
fact is checked against its records): the file is a claim, reviewed in the repository. The bounds a reader holds to (lecode_ls/memory/team/format.py): {bounds}.

Related open formats: Cognition's "Agent Memory Repo" keeps one entry a file with a source link.
This format carries the evidence itself (the records and their digest), which a link cannot, so
an export would lose what makes the fact checkable; none is offered.

```json
{schema}
```
"""


def _shared_files() -> str:
    from lecode_ls.memory import team

    bounds = ", ".join(f"{name} {value}" for name, value in team.BOUNDS.items())
    schema = json.dumps(team.SCHEMA, indent=2, ensure_ascii=False)
    return SHARED_FILES.format(bounds=bounds, schema=schema)


def _feature_folders() -> dict[str, str]:
    """Each method's feature folder (`server/<feature>/`), read from the
    `server/<feature>/methods.py` that holds its table entry."""
    import importlib
    import pkgutil

    from lecode_ls import server

    folders: dict[str, str] = {}
    for info in pkgutil.iter_modules(server.__path__):
        if not info.ispkg:
            continue
        try:
            module = importlib.import_module(f"lecode_ls.server.{info.name}.methods")
        except ModuleNotFoundError:
            continue
        for value in vars(module).values():
            if isinstance(value, tuple):
                for method in value:
                    if isinstance(method, Method):
                        folders[method.name] = f"server/{info.name}/"
    return folders


def _anchor(method: Method) -> str:
    """The link target of a method's heading, as MkDocs and GitHub both spell it."""
    return "#" + "".join(c for c in f"{method.name}-{method.kind}" if c.isalnum() or c == "-")


def _index() -> str:
    """The first table: every method with its kind, the feature folder that serves it and the
    first sentence of its summary, so a name leads to its room."""
    folders = _feature_folders()
    lines = [
        "## Index",
        "",
        "| method | kind | feature folder | summary |",
        "|---|---|---|---|",
    ]
    for method in METHODS:
        first = " ".join(method.summary.split())
        end = first.find(". ")
        first = (first[: end + 1] if end >= 0 else first).replace("|", "\\|")
        link = f"[`{method.name}`]({_anchor(method).lower()})"
        lines.append(f"| {link} | {method.kind} | `{folders[method.name]}` | {first} |")
    return "\n".join(lines) + "\n"


def render_markdown() -> str:
    intro, conventions = INTRO.split("\n## Conventions\n", 1)
    head = f"{intro}\n{_index()}\n## Conventions\n{conventions}"
    sections = [head + _error_rows(), "## Methods\n"]
    sections.extend(_method_md(method) for method in METHODS)
    sections.append(_shared_files())
    sections.append(extensions.render())
    return "\n".join(sections).rstrip() + "\n"


# --- TypeScript ----------------------------------------------------------------------------


def _const_name(method: Method) -> str:
    words = method.name.removeprefix("lecode/").removeprefix("lecode.").replace(".", "/").split("/")
    return words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:])


def _interface(name: str, schema: dict[str, Any]) -> str:
    required = set(schema.get("required", []))
    lines = []
    if schema.get("description"):
        lines.append(f"/** {' '.join(str(schema['description']).split())} */")
    lines.append(f"export interface {name} {{")
    for field, node in schema.get("properties", {}).items():
        if node.get("description"):
            lines.append(f"  /** {' '.join(str(node['description']).split())} */")
        optional = "" if field in required else "?"
        lines.append(f"  {field}{optional}: {ts_type(node)};")
    lines.append("}")
    return "\n".join(lines)


def render_typescript() -> str:
    seen: dict[str, str] = {}
    for method in METHODS:
        models = _models(method.params, "validation")
        if method.result is not None:
            models += _models(method.result, "serialization")
        for name, schema in models:
            seen.setdefault(name, _interface(name, schema))
    requests = [m for m in METHODS if m.kind == "request"]
    notes = [m for m in METHODS if m.kind == "notification"]
    commands = [m for m in METHODS if m.kind == "command"]

    def table(title: str, methods: list[Method]) -> str:
        rows = "\n".join(f'  {_const_name(m)}: "{m.name}",' for m in methods)
        return f"export const {title} = {{\n{rows}\n}} as const;"

    parts = [
        "// Generated from lecode_ls/server/protocol.py by `uv run python -m lecode_ls.contract`.",
        "// Do not edit: a test fails when this file and the server disagree.",
        "",
        table("Requests", requests),
        "",
        table("Notifications", notes),
        "",
        table("Commands", commands),
        "",
        "\n\n".join(seen[name] for name in seen),
    ]
    return "\n".join(parts) + "\n"


def main() -> int:
    settings = render_settings_md(SETTINGS_MD.read_text(encoding="utf-8"))
    SETTINGS_MD.write_text(settings, encoding="utf-8")
    PROTOCOL_MD.write_text(render_markdown(), encoding="utf-8")
    PROTOCOL_TS.parent.mkdir(parents=True, exist_ok=True)
    PROTOCOL_TS.write_text(render_typescript(), encoding="utf-8")
    PACKAGE_JSON.write_text(render_package_json(PACKAGE_JSON.read_text(encoding="utf-8")))
    SETTINGS_TS.write_text(render_settings_typescript(), encoding="utf-8")
    manifest = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))
    current = VSCODE_README.read_text(encoding="utf-8")
    VSCODE_README.write_text(render_vscode_readme(current, manifest), encoding="utf-8")
    # The MCP server's contract (no MCP SDK is loaded to render it).
    from lecode_ls.contract.mcp import MCP_MD, render_mcp_markdown

    MCP_MD.write_text(render_mcp_markdown(), encoding="utf-8")
    written = [PROTOCOL_TS, PACKAGE_JSON, SETTINGS_TS, VSCODE_README, MCP_MD]
    written = [SETTINGS_MD, PROTOCOL_MD, *written]
    names = ", ".join(str(path.relative_to(ROOT)) for path in written)
    print(f"wrote {names}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
