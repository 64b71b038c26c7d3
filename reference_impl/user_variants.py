"""User-written variants: a class of the user's own, named by a *spec* instead of a registered name.

Every registry of variants (protocol variants, plan algorithms, barrier handlers, the recovery
designs' engines) takes, besides its own names, a spec with a ``:`` in it:

* ``some/file.py:ClassName`` — a Python file, relative to the current directory or absolute;
* ``dotted.module:ClassName`` — a module importable from ``sys.path``, or else from the current
  directory (as ``python -m`` finds it; only when ``sys.path`` has no module of that name).

:func:`load_variant` imports it (a file under a stable synthetic module name, once per process)
and returns the class if it subclasses the registry's base; otherwise it raises
:class:`UserVariantError`, one line naming the spec and the problem (no such file, not a ``.py``
file, the import failed and why, no such class, or a class of the wrong kind:
:class:`WrongVariantKind`, or a public name the base does not define: :func:`check_names`). Registered names never contain ``:``, so a name is looked up in its
registry and a spec here, and the lookup happens where the name is used: an executor of a Spark
sweep receives only the string and imports the class itself (the CLI makes a relative path
absolute first, :func:`absolute_spec`, so every process finds the same file).

This runs the user's own code, which is what they asked for. Input *files* (graphs, traces,
logs) are data and are never executed.

Example
-------
>>> is_spec("flink"), is_spec("my_variants.py:Mine")
(False, True)
>>> load_variant("json:JSONDecodeError", ValueError, "error")
<class 'json.decoder.JSONDecodeError'>
>>> load_variant("collections:namedtuple", dict, "mapping")
Traceback (most recent call last):
...
flipcheck.reference_impl.user_variants.WrongVariantKind: collections:namedtuple: namedtuple is a function, not a mapping (a subclass of builtins.dict)
>>> load_variant("no/such/file.py:X", dict, "mapping")
Traceback (most recent call last):
...
flipcheck.reference_impl.user_variants.UserVariantError: no/such/file.py:X: no such file
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
import warnings
from functools import lru_cache
from typing import Mapping

__all__ = ["SEPARATOR", "UserVariantError", "WrongVariantKind", "VariantWarning", "is_spec", "absolute_spec",
           "load_variant", "lookup_variant", "base_name", "spec_of", "check_names", "failure_in_variant"]

# Registered names never contain it; a spec always does.
SEPARATOR = ":"
# Prefix of the synthetic module names files are imported under.
_MODULE_PREFIX = "flipcheck_user_variant_"
# The files of the user's modules that load_variant returned a class of (for failure_in_variant).
_VARIANT_FILES: set[str] = set()


class UserVariantError(ValueError):
    """A spec that names no usable class; the message is one line, ``SPEC: PROBLEM``."""


class WrongVariantKind(UserVariantError):
    """The spec names something, but not a subclass of the registry's base: ``found`` says what
    it is (``Mine is a function``), ``needs`` what the registry takes (``a protocol variant (a
    subclass of flipcheck.model.protocol.Protocol)``)."""

    def __init__(self, message: str, found: str, needs: str):
        super().__init__(message)
        self.found, self.needs = found, needs


class VariantWarning(UserWarning):
    """A user's class that sets a name to the value its base already has: legal, but it changes
    nothing, so a check of it is a check of the base."""


# Names that describe a variant rather than switch a rule: setting one to the base's value is no
# mistake worth a warning.
_METADATA = frozenset({"name", "source", "flink_issue", "part"})


def check_names(cls: type, base: type) -> tuple[str, ...]:
    """Hold ``cls`` (a subclass of ``base``) to the names ``base`` defines, as hypothesis checks
    its settings: a public name the base does not define is read by no rule, so a typo in it
    (``wait_for_pending_checkpoint``) would make a check of the base look like a check of the
    change. Raises :class:`UserVariantError` naming the nearest real name; returns the warnings
    for names set to the value the base already has. Names starting with ``_`` are the user's
    own helpers; dunder names are Python's.

    >>> from flipcheck.model.protocol import Protocol
    >>> class MyProtocol(Protocol):
    ...     wait_for_pending_checkpoint = False
    >>> check_names(MyProtocol, Protocol)
    Traceback (most recent call last):
    ...
    flipcheck.reference_impl.user_variants.UserVariantError: MyProtocol.wait_for_pending_checkpoint is not a name flipcheck.Protocol defines, so it changes nothing: did you mean wait_for_pending_checkpoints? (a helper of your own: start its name with _)
    >>> class Same(Protocol):
    ...     wait_for_final_checkpoint = True
    >>> check_names(Same, Protocol)
    ('Same sets wait_for_final_checkpoint to True, the value flipcheck.Protocol has: it changes nothing',)

    A rule method is held to its parameters, and a switch stays a switch:

    >>> class ExitsEarly(Protocol):
    ...     def may_finish(self, task):
    ...         return True
    >>> check_names(ExitsEarly, Protocol)
    Traceback (most recent call last):
    ...
    flipcheck.reference_impl.user_variants.UserVariantError: ExitsEarly.may_finish(self, task) cannot take the arguments flipcheck.Protocol.may_finish(self, job, state, t) is called with
    """
    defined = set(dir(base))
    public = sorted(name for name in defined if not name.startswith("_"))
    found = []
    for klass in cls.__mro__:
        if klass in base.__mro__:
            continue
        for name, value in vars(klass).items():
            if name.startswith("_"):
                continue
            if name not in defined:
                close = difflib.get_close_matches(name, public, n=1, cutoff=0.6)
                hint = f": did you mean {close[0]}?" if close else "."
                raise UserVariantError(f"{klass.__name__}.{name} is not a name {base_name(base)} defines, so it "
                                       f"changes nothing{hint} (a helper of your own: start its name with _)")
            problem = _override_problem(klass, name, value, base)
            if problem:
                raise UserVariantError(problem)
            inherited = getattr(base, name)
            if (klass is cls and name not in _METADATA and not callable(value) and type(value) is type(inherited)
                    and value == inherited):
                found.append(f"{cls.__name__} sets {name} to {value!r}, the value {base_name(base)} has: "
                             f"it changes nothing")
    return tuple(found)


def _override_problem(klass: type, name: str, value, base: type) -> str | None:
    """Why ``klass``'s ``name = value`` cannot stand in for the base's: a method replaced by a
    value or a switch by a method (every rule would read something else), or a method whose
    parameters cannot take what the rules pass (the first exploration would fail in the middle)."""
    inherited = inspect.getattr_static(base, name)
    where = f"{klass.__name__}.{name}"
    if isinstance(inherited, bool) and inspect.isfunction(value):
        return f"{where} is a method, but {base_name(base)}.{name} is a switch: set it to True or False"
    if not inspect.isfunction(inherited):
        return None
    if not callable(value):
        return (f"{where} is {value!r}, but {base_name(base)}.{name} is a method: override it with "
                f"def {name}{_parameters(inherited)}")
    if not inspect.isfunction(value):
        return None   # a staticmethod, classmethod or callable object: the user's own arrangement
    positional = [p for p in inspect.signature(inherited).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    try:
        inspect.signature(value).bind(*positional)
    except TypeError:
        return (f"{where}{_parameters(value)} cannot take the arguments {base_name(base)}.{name}"
                f"{_parameters(inherited)} is called with")
    return None


def _parameters(function) -> str:
    """``(self, job, state, t)``: a function's parameters by name, as a user would write them."""
    parameters = inspect.signature(function).parameters.values()
    return "(" + ", ".join(str(p.replace(annotation=p.empty)) for p in parameters) + ")"


def is_spec(name: str) -> bool:
    """A user variant's spec (``PATH.py:CLASS`` or ``MODULE:CLASS``), not a registered name."""
    return SEPARATOR in name


def _split(spec: str) -> tuple[str, str]:
    where, _, class_name = spec.rpartition(SEPARATOR)
    if not where or not class_name:
        raise UserVariantError(f"{spec}: not PATH.py:CLASS or MODULE:CLASS")
    return where, class_name


def _is_path(where: str) -> bool:
    """A file, not a module: it has a directory or ``.py`` in it, or is a file here (``notes.txt``)."""
    if "/" in where or os.sep in where or where.endswith(".py"):
        return True
    try:
        return os.path.isfile(where)
    except (OSError, ValueError):
        return False


def absolute_spec(spec: str) -> str:
    """``spec`` with a relative file path made absolute (names and module specs unchanged), so
    the spec means the same file in every process, whatever its working directory."""
    if not is_spec(spec):
        return spec
    where, _, class_name = spec.rpartition(SEPARATOR)
    if not where or not _is_path(where) or os.path.isabs(where):
        return spec
    try:
        return os.path.abspath(where) + SEPARATOR + class_name
    except (OSError, ValueError):  # a path os cannot handle (NUL): the loader says so
        return spec


def spec_of(cls: type) -> str | None:
    """The spec that loads ``cls`` again in another process (``/abs/path/file.py:Class``), or None
    for a class no spec can name (defined inside a function or another class, or not in a file).

    >>> spec_of(WrongVariantKind).endswith("user_variants.py:WrongVariantKind")
    True
    """
    if not inspect.isclass(cls) or "." in cls.__qualname__:
        return None
    if getattr(sys.modules.get(cls.__module__), cls.__qualname__, None) is not cls:
        return None   # not what its module holds under that name (a doctest's, or redefined)
    try:
        source = inspect.getsourcefile(cls)
    except (TypeError, OSError):   # a built-in class, or a module without a file
        return None
    return None if source is None else os.path.abspath(source) + SEPARATOR + cls.__qualname__


def base_name(base: type) -> str:
    """The shortest public dotted name of ``base``: its name in the public API (``flipcheck.X``,
    maybe under another name there), else the outermost package that exports it."""
    root = sys.modules.get("flipcheck")   # only read for a message: no import of the layer above
    for public in getattr(root, "__all__", ()):
        if getattr(root, public, None) is base:
            return f"flipcheck.{public}"
    parts = base.__module__.split(".")
    for end in range(1, len(parts) + 1):
        module = sys.modules.get(".".join(parts[:end]))
        if module is not None and getattr(module, base.__qualname__, None) is base:
            return f"{'.'.join(parts[:end])}.{base.__qualname__}"
    return f"{base.__module__}.{base.__qualname__}"


def _one_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return type(error).__name__ + (f": {lines[0]}" if lines else "")


class _ImportProblem(Exception):
    """Why a file could not be imported (the caller names the spec)."""


@lru_cache(maxsize=None)
def _load_file(path: str):
    """The module of the file ``path`` (absolute), imported once per process whichever classes of
    it are asked for, so classes of one file see each other."""
    try:
        exists, is_file = os.path.exists(path), os.path.isfile(path)
    except (OSError, ValueError) as error:
        raise _ImportProblem(f"not a usable path ({_one_line(error)})") from None
    if not exists:
        raise _ImportProblem("no such file")
    if not is_file or not path.endswith(".py"):
        raise _ImportProblem("not a .py file")
    name = _MODULE_PREFIX + hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module  # dataclasses, pickling and typing look classes' modules up here
    try:
        module_spec.loader.exec_module(module)
    except (Exception, SystemExit) as error:  # noqa: BLE001 - the user's code: any failure is one line
        del sys.modules[name]
        raise _ImportProblem(f"importing {path} failed: {_one_line(error)}") from None
    return module


def _import_file(spec: str, where: str):
    try:
        return _load_file(os.path.abspath(where))
    except (OSError, ValueError) as error:  # abspath of a path os cannot handle
        raise UserVariantError(f"{spec}: not a usable path ({_one_line(error)})") from None
    except _ImportProblem as problem:
        raise UserVariantError(f"{spec}: {problem}") from None


def _import_module(spec: str, dotted: str):
    if not all(part.isidentifier() for part in dotted.split(".")):
        raise UserVariantError(f"{spec}: {dotted!r} is neither a .py file nor a module name")
    try:
        try:
            return importlib.import_module(dotted)
        except ModuleNotFoundError as error:
            here = _module_here(dotted)
            if here is None or error.name != dotted.split(".")[0]:
                raise
            # The module is in the current directory, which `python -m` would search but the
            # `flipcheck` script does not: search it too, only now, so it never shadows another.
            sys.path.insert(0, here)
            try:
                return importlib.import_module(dotted)
            finally:
                sys.path.remove(here)
    except ModuleNotFoundError as error:
        if error.name is not None and (dotted == error.name or dotted.startswith(error.name + ".")):
            first = dotted.split(".")[0]
            raise UserVariantError(f"{spec}: no module named {error.name!r} (a module is found on sys.path or in the "
                                   f"current directory: run from where it imports, add its folder to PYTHONPATH, or "
                                   f"name the file: {first}.py:CLASS)") from None
        raise UserVariantError(f"{spec}: importing module {dotted} failed: {_one_line(error)}") from None
    except (Exception, SystemExit) as error:  # noqa: BLE001 - the user's code: any failure is one line
        raise UserVariantError(f"{spec}: importing module {dotted} failed: {_one_line(error)}") from None


def _module_here(dotted: str) -> str | None:
    """The current directory, if the top package or module of ``dotted`` is a file or folder in it."""
    try:
        here = os.getcwd()
    except OSError:   # the directory was deleted under us
        return None
    first = dotted.split(".")[0]
    if os.path.isfile(os.path.join(here, first + ".py")) or os.path.isdir(os.path.join(here, first)):
        return here
    return None


def _kind(value) -> str:
    if inspect.isclass(value):
        bases = [base_name(b) for b in value.__bases__ if b is not object]
        return f"a class deriving from {', '.join(bases)}" if bases else "a class deriving from object alone"
    if inspect.ismodule(value):
        return "a module"
    if inspect.isroutine(value):
        return "a function"
    return f"a {type(value).__name__} instance"


@lru_cache(maxsize=None)
def load_variant(spec: str, base: type, what: str) -> type:
    """The class ``spec`` names, which must subclass ``base`` (``what`` says what the registry
    takes, e.g. ``"protocol variant"``); :class:`UserVariantError` naming the problem otherwise.
    The same spec gives the same class for the life of the process."""
    where, class_name = _split(spec)
    if _is_path(where):
        module = _import_file(spec, where)
    else:
        module = _import_module(spec, where)
    if not class_name.isidentifier():
        raise UserVariantError(f"{spec}: {class_name!r} is not a class name")
    if not hasattr(module, class_name):
        raise UserVariantError(f"{spec}: no class {class_name} in {getattr(module, '__file__', None) or where}")
    value = getattr(module, class_name)
    needs = f"{'an' if what[0] in 'aeiou' else 'a'} {what} (a subclass of {base_name(base)})"
    if not (inspect.isclass(value) and issubclass(value, base)):
        found = f"{class_name} is {_kind(value)}"
        raise WrongVariantKind(f"{spec}: {found}, not {needs}", found, needs)
    source = getattr(module, "__file__", None)
    if source:
        _VARIANT_FILES.add(os.path.abspath(source))
    if base is object:
        return value   # no registry's base yet (--suite all picks it by the class): its lookup checks
    try:
        for warning in check_names(value, base):
            warnings.warn(warning, VariantWarning, stacklevel=2)
    except UserVariantError as error:
        raise UserVariantError(f"{spec}: {error}") from None
    return value


def lookup_variant(name: str, registry: Mapping[str, type], base: type, what: str) -> type:
    """A registry's lookup: ``registry[name]``, or for a spec the user's subclass of ``base``
    (:func:`load_variant`); ValueError naming the registered names or the spec's problem."""
    if is_spec(name):
        return load_variant(name, base, what)
    try:
        return registry[name]
    except KeyError:
        raise ValueError(f"unknown {what} {name!r} (expected one of {', '.join(registry)})") from None


def failure_in_variant(error: BaseException) -> str | None:
    """Where a user's variant raised ``error``, as one line naming the exception and the user's
    own file, line and function; None when no frame of the traceback is in a variant's file
    (then it is flipcheck's own failure, whose traceback is worth showing).

    >>> try:
    ...     load_variant("json:JSONDecoder", object, "decoder")().decode("{")
    ... except ValueError as error:
    ...     print(failure_in_variant(error))
    None
    """
    where = None
    frame = error.__traceback__
    while frame is not None:     # the innermost frame in the user's files
        filename = os.path.abspath(frame.tb_frame.f_code.co_filename)
        if filename in _VARIANT_FILES:
            where = (filename, frame.tb_lineno, frame.tb_frame.f_code.co_name)
        frame = frame.tb_next
    if where is None:
        return None
    return f"your code raised {_one_line(error)} (at {where[0]}:{where[1]}, in {where[2]})"
