"""A toolhost plugin in Python: a greeting from the operator's configuration;
word statistics, a chart, links and embedded files over a folder the operator
grants; a chime; a greeting that asks the user's name; a summary by the
client's model; the client's roots; a report that asks the user and the model
in one round; what the client can be asked; an index that may run as an MCP
task; a prompt and resources."""

import math
import os
import re
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from toolhost_plugin import (
    Annotations,
    Audio,
    Available,
    ClientError,
    Image,
    Message,
    Output,
    Question,
    ResourceLink,
    ResourceNotFound,
    TextResource,
    ask,
    available,
    begin_task,
    declare,
    elicit,
    list_roots,
    log,
    prompt,
    resource,
    resource_template,
    sample,
    tool,
)

WORKSPACE = Path("/workspace")

# What this plugin asks for; the operator still has to grant it.
declare(env=["GREETING"], dirs=[str(WORKSPACE)], elicitation=True, sampling=True, roots=True)


@tool(read_only=True, idempotent=True)
def greet(name: str) -> str:
    """Greets someone with the greeting the operator configured (`GREETING`, default "Hello").

    Args:
        name: Who to greet.
    """
    if not name.strip():
        raise ValueError("`name` must not be empty")
    return f"{os.environ.get('GREETING', 'Hello')}, {name}!"


@dataclass
class Stats:
    """Word statistics of one file."""

    lines: int
    words: int
    top: list[str]


def common_words(text: str, top: int) -> tuple[list[str], dict[str, int], int]:
    """The ``top`` most common words of ``text`` (ties in order of first appearance), their counts, the word count."""
    words = re.findall(r"\w+", text.lower())
    counts: dict[str, int] = {}
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    # Most common first; sorted is stable, so ties keep their first appearance.
    return sorted(counts, key=lambda w: -counts[w])[:top], counts, len(words)


@tool(read_only=True, idempotent=True)
def word_stats(path: str, top: int = 3) -> Output[Stats]:
    """Counts the lines and words of a text file in the workspace and lists its most common words.

    Args:
        path: The file, relative to the workspace folder.
        top: How many of the most common words to list (1 to 20).
    """
    if not 1 <= top <= 20:
        raise ValueError("`top` must be between 1 and 20")
    text = (WORKSPACE / path).read_text(encoding="utf-8")
    common, _, words = common_words(text, top)
    stats = Stats(lines=len(text.splitlines()), words=words, top=common)
    log("info", "counted words", path=path, words=words)
    summary = f"{path}: {stats.lines} lines, {stats.words} words; most common: {', '.join(common) or 'none'}"
    return Output(stats, text=summary)


BAR, GAP, WIDTH = 12, 4, 200


def png(width: int, height: int, rows: list[bytes]) -> bytes:
    """A grayscale PNG of ``rows`` (one byte a pixel)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\0" + row for row in rows))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def bar_chart(values: list[int]) -> bytes:
    """Horizontal bars, the longest ``WIDTH`` pixels wide, black on white."""
    longest = max(values, default=1)
    rows = []
    for i, value in enumerate(values):
        length = round(WIDTH * value / longest)
        rows += [b"\0" * length + b"\xff" * (WIDTH - length)] * BAR
        if i < len(values) - 1:
            rows += [b"\xff" * WIDTH] * GAP
    return png(WIDTH, len(rows), rows)


@tool(read_only=True, idempotent=True, title="Word chart")
def word_chart(path: str, top: int = 5) -> Output:
    """Draws the most common words of a text file in the workspace as a bar chart (a PNG image).

    Args:
        path: The file, relative to the workspace folder.
        top: How many words to chart (1 to 20).
    """
    if not 1 <= top <= 20:
        raise ValueError("`top` must be between 1 and 20")
    common, counts, _ = common_words((WORKSPACE / path).read_text(encoding="utf-8"), top)
    if not common:
        return Output(text=f"{path} has no words to chart")
    caption = ", ".join(f"{w} ({counts[w]})" for w in common)
    return Output(text=f"Most common words of {path}: {caption}", content=[Image(bar_chart([counts[w] for w in common]), "image/png")])


@tool(read_only=True, idempotent=True)
def share(path: str) -> list:
    """Gives a text file of the workspace as a link the client can read and as an embedded resource.

    Args:
        path: The file, relative to the workspace folder.
    """
    text = (WORKSPACE / path).read_text(encoding="utf-8")
    uri = f"notes://workspace/{path}"
    return [
        ResourceLink(uri, path, mime_type="text/plain", size=len(text.encode())),
        TextResource(uri, text, "text/plain", annotations=Annotations(audience=["assistant"], priority=0.5)),
    ]


def wav(frequency: int, rate: int = 8000, seconds: float = 0.25) -> bytes:
    """A sine tone as an 8-bit mono WAV file."""
    samples = bytes(round(128 + 100 * math.sin(2 * math.pi * frequency * i / rate)) for i in range(int(rate * seconds)))
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate, 1, 8)
    return b"RIFF" + struct.pack("<I", 36 + len(samples)) + b"WAVEfmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(samples)) + samples


@tool(read_only=True, idempotent=True)
def chime(frequency: int = 440) -> Audio:
    """Plays a short chime: a quarter of a second of a sine tone (a WAV sound).

    Args:
        frequency: The tone's pitch in Hz (100 to 2000).
    """
    if not 100 <= frequency <= 2000:
        raise ValueError("`frequency` must be between 100 and 2000")
    return Audio(wav(frequency), "audio/wav")


@dataclass
class Name:
    """The user's name."""

    name: str


@tool(title="Greet me")
def greet_me() -> str:
    """Asks the user for their name, then greets them with the configured greeting."""
    answer = elicit("What is your name?", Name)
    if not answer.accepted:
        return f"No name given ({answer.action}): no greeting."
    return greet(answer.content.name)


@tool(read_only=True, open_world=True)
def summarize(path: str) -> str:
    """Summarizes a text file in the workspace in one sentence, with the client's model.

    Args:
        path: The file, relative to the workspace folder.
    """
    text = (WORKSPACE / path).read_text(encoding="utf-8")
    reply = sample(
        [Message("user", f"Summarize these notes in one sentence:\n\n{text}")],
        max_tokens=200,
        system_prompt="You summarize notes faithfully and briefly.",
    )
    log("info", "summarized", path=path, model=reply.model)
    if reply.text is None:
        raise ValueError(f"the model answered with {type(reply.content).__name__}, not text")
    return reply.text


@tool(read_only=True, title="Client roots")
def client_roots() -> str:
    """Lists the folders and files the client shares (its roots)."""
    roots = list_roots()
    return f"{len(roots)} root(s): " + ", ".join(r.uri if r.name is None else f"{r.uri} ({r.name})" for r in roots)


@dataclass
class Reader:
    """Who a report is for."""

    name: str


@tool(read_only=True, open_world=True)
def report(path: str) -> str:
    """Reports on a text file of the workspace: asks the user who it is for and the client's model for a summary, in one round.

    Args:
        path: The file, relative to the workspace folder.
    """
    text = (WORKSPACE / path).read_text(encoding="utf-8")
    reader, summary = ask(
        [
            Question.elicit("reader", "Who is the report for?", Reader),
            Question.sample("summary", f"Summarize these notes in one sentence:\n\n{text}", max_tokens=200),
        ]
    )
    for answer in (reader, summary):
        if isinstance(answer, ClientError):
            raise answer
    if not reader.accepted:
        return f"No reader given ({reader.action}): no report."
    return f"Report on {path} for {reader.content.name}: {summary.text}"


@tool(read_only=True, idempotent=True)
def can_ask() -> Available:
    """Says what this call may ask the client: its user (elicitation), its model (sampling), its roots."""
    return available()


@tool(read_only=True, task="optional", deferred=True)
def index_words(path: str) -> str:
    """Indexes the words of a text file in the workspace: a client that supports MCP tasks gets a task once the file is read.

    Args:
        path: The file, relative to the workspace folder.
    """
    text = (WORKSPACE / path).read_text(encoding="utf-8")
    as_task = begin_task()
    _, counts, words = common_words(text, 0)
    where = "as a task" if as_task else "in the request"
    return f"Indexed {path}: {words} words, {len(counts)} distinct ({where})."


@prompt(title="Review notes")
def review(notes: str, focus: Literal["clarity", "grammar", "tone"] = "clarity") -> list[Message]:
    """Asks the model to review notes.

    Args:
        notes: The notes to review.
        focus: What the review looks at.
    """
    return [
        Message("user", f"Review these notes for {focus}; list the three changes that matter most.\n\n{notes}"),
    ]


@resource("notes://guide", name="guide", title="How to use the notes plugin", mime_type="text/markdown")
def guide() -> str:
    """What the notes plugin offers."""
    return "# Notes\n\nAsk for `word_stats`, `word_chart` or `summarize` of a file; read one as `notes://workspace/NAME`.\n"


def workspace_files(value: str) -> list[str]:
    """The files of the workspace whose names start with ``value`` (none when it is not granted)."""
    if not WORKSPACE.is_dir():
        return []
    return sorted(p.name for p in WORKSPACE.iterdir() if p.is_file() and p.name.startswith(value))


@resource_template("notes://workspace/{name}", name="workspace-file", mime_type="text/plain", complete={"name": workspace_files})
def workspace_file(name: str) -> str:
    """A text file of the workspace."""
    path = WORKSPACE / name
    if not path.is_file():
        raise ResourceNotFound(f"no file {name} in the workspace")
    return path.read_text(encoding="utf-8")
