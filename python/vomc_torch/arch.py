"""Custom architectures ("arch": "MODULE:FACTORY"): where their module is,
recorded once when a run starts, and loaded back from that record.

MODULE is either a path to a Python file (it ends in ".py" or holds a path
separator: "gru.py", "models/gru.py") or an importable dotted name ("gru",
"mypkg.models"), looked up on the interpreter's sys.path (PYTHONPATH
included) and then in the current directory.  FACTORY is a name in that
module; factory(config) returns the nn.Module.

resolve() finds the module's file and returns its record, kept in the run's
config (config.json, the checkpoint's and model.safetensors's metadata)
under "arch_source":

  {"module": import name, "factory": name, "file": absolute path of the
   module's file, "root": the sys.path folder it is imported from,
   "sha256": SHA-256 of the file's bytes (hex)}

load_factory() imports the module from that record (the root put on
sys.path first), without PYTHONPATH, after checking that the file is still
there and has the recorded hash: a changed or vanished file is refused with
an ArchError naming the file, its recorded hash and its present one.  Only
the module's own file is hashed, not the modules it imports.  Errors raised
while importing the module or calling the factory become ArchErrors naming
the interpreter (sys.executable) and the place in the user's code, never a
bare traceback.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import sys
import traceback
from typing import Callable, Optional

SOURCE_KEY = "arch_source"


class ArchError(ValueError):
    """A custom architecture that cannot be found, loaded or built."""


def split(arch: str) -> tuple:
    """(module, factory) of "MODULE:FACTORY" (split at the last colon)."""
    mod, sep, fn = arch.rpartition(":")
    if not sep or not mod or not fn.isidentifier():
        raise ArchError(f"arch {arch!r}: want MODULE:FACTORY (a Python file or module name, a colon, the factory's name)")
    return mod, fn


def is_path(mod: str) -> bool:
    """Whether MODULE names a file rather than an importable name."""
    return mod.endswith(".py") or os.sep in mod or "/" in mod


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def _python() -> str:
    return f"{sys.executable or 'python'} (Python {sys.version.split()[0]})"


def _where(e: BaseException) -> str:
    """'file:line' of the innermost frame of e's traceback, if any."""
    tb = traceback.extract_tb(e.__traceback__)
    return f" at {tb[-1].filename}:{tb[-1].lineno}" if tb else ""


def _import_failed(arch: str, what: str, e: BaseException) -> ArchError:
    if isinstance(e, ArchError):
        return e
    return ArchError(f"arch {arch!r}: importing {what} with {_python()} failed{_where(e)}: {type(e).__name__}: {e}")


def _find(mod: str, path: list):
    """The spec of the module named mod on path (its packages searched in
    turn, none of them imported, sys.modules not consulted), or None."""
    spec, name = None, ""
    for part in mod.split("."):
        name = f"{name}.{part}" if name else part
        if spec is not None:
            path = list(spec.submodule_search_locations or [])
            if not path:
                return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None:
            return None
    return spec


def resolve(arch: str, cwd: Optional[str] = None) -> dict:
    """The arch_source record of a new run's "MODULE:FACTORY" (see the
    module's doc); it imports the module once to check that FACTORY is
    there and callable."""
    mod, fn = split(arch)
    cwd = os.path.abspath(cwd or os.getcwd())
    if is_path(mod):
        file = os.path.realpath(os.path.join(cwd, mod))
        if not os.path.isfile(file):
            raise ArchError(f"arch {arch!r}: there is no file {file}")
        if not file.endswith(".py"):
            raise ArchError(f"arch {arch!r}: {file} is not a Python file (.py)")
        name, root = os.path.basename(file)[:-3], os.path.dirname(file)
        if not name.isidentifier():
            raise ArchError(f"arch {arch!r}: {os.path.basename(file)} is not importable (its name must be a Python identifier)")
    else:
        if not all(p.isidentifier() for p in mod.split(".")):
            raise ArchError(f"arch {arch!r}: {mod!r} is neither a Python file (.py) nor a module name")
        spec = _find(mod, sys.path + [cwd])  # cwd after the interpreter's own path: never shadows an installed package
        if spec is None:
            raise ArchError(f"arch {arch!r}: no module {mod!r} on the path of {_python()} nor in {cwd}; "
                            f"give its file instead (--arch path/to/{mod.split('.')[-1]}.py:{fn})")
        if not spec.origin or not os.path.isfile(spec.origin):
            raise ArchError(f"arch {arch!r}: module {mod!r} has no file of its own ({spec.origin}); give a .py file")
        name, file = mod, os.path.realpath(spec.origin)
        root = os.path.dirname(file)
        for _ in mod.split(".")[:-1] + ([""] if os.path.basename(file).startswith("__init__.") else []):
            root = os.path.dirname(root)
    src = {"module": name, "factory": fn, "file": file, "root": root, "sha256": file_sha256(file)}
    load_factory(arch, src)
    return src


def load_factory(arch: str, src: dict) -> Callable:
    """The factory of arch from its arch_source record src, after checking
    that the recorded file is unchanged."""
    try:
        file, want, name, root, fn = src["file"], src["sha256"], src["module"], src["root"], src["factory"]
    except (KeyError, TypeError):
        raise ArchError(f"arch {arch!r}: {SOURCE_KEY} {src!r} lacks file, sha256, module, root or factory") from None
    said = f"arch {arch!r}: its module was recorded as {file} (sha256 {want})"
    if not os.path.isfile(file):
        raise ArchError(f"{said}, and that file no longer exists: put it back, or train afresh")
    now = file_sha256(file)
    if now != want:
        raise ArchError(f"{said}, and that file has changed since (sha256 now {now}): restore the recorded version, "
                        f"or train afresh")
    if root not in sys.path:
        sys.path.insert(0, root)  # for the modules it imports beside it
    m = sys.modules.get(name)
    if m is None or os.path.realpath(getattr(m, "__file__", "") or "") != file:
        # from the recorded file, even where a module of that name was
        # imported from elsewhere before (another run's)
        pkg = os.path.basename(file).startswith("__init__.")
        spec = importlib.util.spec_from_file_location(name, file,
                                                      submodule_search_locations=[os.path.dirname(file)] if pkg else None)
        m = importlib.util.module_from_spec(spec)
        old, sys.modules[name] = sys.modules.get(name), m
        try:
            spec.loader.exec_module(m)
        except Exception as e:
            if old is None:
                del sys.modules[name]
            else:
                sys.modules[name] = old
            raise _import_failed(arch, file, e) from None
    f = getattr(m, fn, None)
    if not callable(f):
        raise ArchError(f"arch {arch!r}: {file} has no function {fn!r}")
    return f


def build(arch: str, cfg: dict, factory: Callable):
    """factory(cfg), its exceptions as ArchErrors naming the user's code."""
    try:
        return factory(cfg)
    except Exception as e:
        raise ArchError(f"arch {arch!r}: the factory raised{_where(e)}: {type(e).__name__}: {e}") from None
