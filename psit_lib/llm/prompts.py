"""Prompt templates as versioned data: each study's ``prompts.toml``, read through one :class:`PromptBook`.

One TOML table per template: an integer ``version`` raised whenever the wording changes, the
``text`` as a multi-line literal (kept byte for byte) and an optional ``about``; a slot is
``{lowercase_name}``, other braces are plain text. A user's ``PSIT_PROMPTS_FILE`` replaces
templates by name, checked before any model call, and keeps its place in the catalogue, so the
run's fingerprints change with it.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from psit_lib.data_files import resolve_config_path
from psit_lib.llm.errors import ConfigurationError

SLOT = re.compile(r"\{([a-z_][a-z0-9_]*)\}")
PLACEHOLDER = "<X>"
"""What the catalogue puts in a slot that has no example value."""
PROMPTS_FILE = "prompts.toml"
PROMPTS_ENV = "PSIT_PROMPTS_FILE"
STUDIES_PACKAGE = "psit_lib.studies"
"""The package whose subpackages keep the workbench's prompts files (read as data, not imported)."""


class PromptError(LookupError):
    """An unknown template, a slot left unfilled or filled for nothing, or a malformed prompts file."""

    def __str__(self) -> str:  # one plain sentence (LookupError subclasses would quote it otherwise)
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    version: int
    text: str
    about: str = ""

    @property
    def slots(self) -> tuple[str, ...]:
        """The slot names in order of first appearance."""
        return tuple(dict.fromkeys(SLOT.findall(self.text)))

    def render(self, values: Mapping[str, object]) -> str:
        slots = self.slots
        missing = [s for s in slots if s not in values]
        if missing:
            raise PromptError(f"Prompt template {self.name!r} needs a value for slot(s) {', '.join(missing)}; "
                              f"it has the slots {', '.join(slots)}.")
        extra = sorted(set(values) - set(slots))
        if extra:
            raise PromptError(f"Prompt template {self.name!r} has no slot(s) {', '.join(extra)}; its slots are "
                              f"{', '.join(slots) or '(none)'}.")
        return SLOT.sub(lambda m: str(values[m.group(1)]), self.text)


class PromptCatalogue(dict[str, str]):
    """name -> catalogued text (a plain mapping for run metadata), with each template's ``versions``."""

    versions: dict[str, int]
    overridden: dict[str, dict[str, Any]]


class PromptBook:
    """The templates of one study's prompts file, by name."""

    def __init__(self, templates: Mapping[str, PromptTemplate], source: str) -> None:
        self.templates = dict(templates)
        self.source = source
        self.lookups: set[str] = set()
        self.overridden: dict[str, dict[str, Any]] = {}
        """Templates replaced from a user's file: name -> file, its version, the version it replaces."""

    @classmethod
    def from_toml(cls, text: str, source: str) -> PromptBook:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise PromptError(f"The prompts file {source} is not valid TOML: {exc}.") from None
        templates = {}
        for name, entry in data.items():
            if not isinstance(entry, dict) or set(entry) - {"version", "text", "about"}:
                raise PromptError(f"In {source}, [{name!r}] must be a table with only version, text and about.")
            version, body = entry.get("version"), entry.get("text")
            if not isinstance(version, int) or isinstance(version, bool) or version < 1:
                raise PromptError(f"In {source}, template {name!r} needs an integer version of at least 1.")
            if not isinstance(body, str) or not body:
                raise PromptError(f"In {source}, template {name!r} needs a non-empty text.")
            templates[name] = PromptTemplate(name, version, body, str(entry.get("about", "")))
        return cls(templates, source)

    def template(self, name: str) -> PromptTemplate:
        """The template called ``name`` (recorded in ``lookups``)."""
        self.lookups.add(name)
        try:
            return self.templates[name]
        except KeyError:
            raise PromptError(f"There is no prompt template {name!r} in {self.source}.") from None

    def render(self, name: str, **values: object) -> str:
        """The text of ``name`` with every slot filled (values are written with ``str``)."""
        return self.template(name).render(values)

    def catalogue(self, examples: Mapping[str, Mapping[str, object]] | None = None) -> PromptCatalogue:
        """Every template of the file by name, rendered with its fixed example values
        (``examples[name]``; a slot without one gets ``PLACEHOLDER``), so a fingerprint of the
        text changes exactly when the wording does. Does not count as a lookup."""
        examples = examples or {}
        unknown = sorted(set(examples) - set(self.templates))
        if unknown:
            raise PromptError(f"Catalogue examples name template(s) {', '.join(unknown)} that {self.source} "
                              "does not have.")
        out = PromptCatalogue()
        for name, template in self.templates.items():
            given = examples.get(name, {})
            out[name] = template.render({slot: given.get(slot, PLACEHOLDER) for slot in template.slots}
                                        | {k: v for k, v in given.items() if k not in template.slots})
        out.versions = {name: t.version for name, t in self.templates.items()}
        out.overridden = {name: dict(info) for name, info in self.overridden.items()}
        return out

    def with_overrides(self, overrides: PromptBook) -> PromptBook:
        """A copy of this book with the templates ``overrides`` has of the same name replaced
        (checked with :func:`check_overrides` first); names this book lacks are left to other books."""
        replaced = {name: t for name, t in overrides.templates.items() if name in self.templates}
        book = PromptBook({**self.templates, **replaced}, self.source)
        book.overridden = {name: {"file": overrides.source, "version": t.version,
                                  "replaces_version": self.templates[name].version}
                           for name, t in replaced.items()}
        return book


_BOOKS: dict[tuple[str, str, str | None], PromptBook] = {}


def load_prompts(package: str, filename: str = PROMPTS_FILE) -> PromptBook:
    """The prompt book of ``package`` (e.g. ``"psit_lib.studies.acc"``), read once per process
    (per ``PSIT_PROMPTS_FILE``): every caller gets the same book, so its ``lookups`` see every
    use. Templates of the user's prompts file replace those of the same name."""
    overrides = prompt_overrides()
    key = (package, filename, overrides.source if overrides else None)
    if key not in _BOOKS:
        try:
            root = resources.files(package)  # imports the package, whose modules may load the book first
            text = root.joinpath(filename).read_text(encoding="utf-8")
        except (FileNotFoundError, ModuleNotFoundError):
            raise PromptError(f"The package {package} has no prompts file {filename}.") from None
        book = PromptBook.from_toml(text, f"{package.replace('.', '/')}/{filename}")
        _BOOKS.setdefault(key, book.with_overrides(overrides) if overrides else book)
    return _BOOKS[key]


# --------------------------------------------------------------------------- a user's wording


def workbench_templates() -> dict[str, PromptTemplate]:
    """Every template of every study's prompts file, by name (the names a user's file may replace)."""
    templates: dict[str, PromptTemplate] = {}
    for folder in sorted(resources.files(STUDIES_PACKAGE).iterdir(), key=lambda f: f.name):
        file = folder.joinpath(PROMPTS_FILE)
        if folder.is_dir() and file.is_file():
            book = PromptBook.from_toml(file.read_text(encoding="utf-8"), f"{STUDIES_PACKAGE}.{folder.name}")
            templates.update(book.templates)
    return templates


def check_overrides(overrides: PromptBook, known: Mapping[str, PromptTemplate]) -> None:
    """A ConfigurationError in one sentence when ``overrides`` names a template no study has, or
    when a template's slots are not exactly those of the one it replaces."""
    unknown = [name for name in overrides.templates if name not in known]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(known), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigurationError(f"{PROMPTS_ENV}: {overrides.source} names template(s) {', '.join(unknown)} that no "
                                 f"study's prompts file has{hint}.")
    for name, template in overrides.templates.items():
        wanted, given = set(known[name].slots), set(template.slots)
        if wanted != given:
            missing, extra = sorted(wanted - given), sorted(given - wanted)
            parts = ([f"lacks the slot(s) {', '.join('{' + s + '}' for s in missing)}"] if missing else []) + \
                    ([f"has slot(s) {', '.join('{' + s + '}' for s in extra)} that the code does not fill"]
                     if extra else [])
            raise ConfigurationError(f"{PROMPTS_ENV}: template {name!r} in {overrides.source} {' and '.join(parts)}; "
                                     f"it must have exactly the slots "
                                     f"{', '.join('{' + s + '}' for s in known[name].slots) or '(none)'}.")


_OVERRIDES: dict[tuple[str, float], PromptBook] = {}


def read_overrides(path: str) -> PromptBook:
    """The user's prompts file at ``path``, parsed and checked against every study's templates."""
    file = resolve_config_path(path)
    try:
        stamp = (str(file.resolve()), file.stat().st_mtime)
        if stamp not in _OVERRIDES:
            text = file.read_text(encoding="utf-8")
            book = PromptBook.from_toml(text, str(file))
            check_overrides(book, workbench_templates())
            _OVERRIDES[stamp] = book
    except OSError as exc:
        raise ConfigurationError(f"{PROMPTS_ENV}={path!r} cannot be read ({exc.strerror or exc}).") from None
    except PromptError as exc:
        raise ConfigurationError(f"{PROMPTS_ENV}: {exc}") from None
    return _OVERRIDES[stamp]


def prompt_overrides(env: Mapping[str, str] | None = None) -> PromptBook | None:
    """The user's prompts file named by ``PSIT_PROMPTS_FILE`` (checked), or None when unset."""
    path = (os.environ if env is None else env).get(PROMPTS_ENV, "").strip()
    return read_overrides(path) if path else None
