"""safetensors files with vomc's checksum, read and written without the
safetensors package.

Layout: an unsigned 64-bit little-endian header length n, n bytes of JSON
header (padded with spaces to a multiple of 8), then the raw little-endian
bytes of every tensor.  The header maps "__metadata__" to a string->string
map and each tensor name to {"dtype", "shape", "data_offsets": [begin, end]}.

vomc records in the metadata, under CHECKSUM_KEY, the SHA-256 (lowercase hex)
of the *canonical header* followed by the data section.  The canonical
header is the header as Go's encoding/json marshals it without the checksum
key (and without "__metadata__" when the metadata is then empty): object
keys sorted by bytes, tensor entries with their fields in the order dtype,
shape, data_offsets, no spaces, and Go's string escaping (see go_json_str).
vomc's readers verify it, so a file written here loads in vomc verified.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
from typing import Dict, List, Tuple

import numpy as np

CHECKSUM_KEY = "vomc.data_sha256"
METADATA_KEY = "__metadata__"
MAX_HEADER = 256 << 20

_DTYPES = {"F32": np.dtype("<f4"), "F64": np.dtype("<f8"), "I64": np.dtype("<i8"), "I32": np.dtype("<i4"),
           "U8": np.dtype("u1"), "BF16": None, "F16": np.dtype("<f2")}


def go_json_str(s: str) -> str:
    """s as a JSON string exactly as Go's encoding/json writes it: \\" \\\\ \\b
    \\f \\n \\r \\t, other control characters and <, >, & as \\u00xx, U+2028
    and U+2029 as \\u2028/\\u2029, everything else as UTF-8."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch in "\b\f\n\r\t":
            out.append({"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif o < 0x20 or ch in "<>&":
            out.append("\\u%04x" % o)
        elif o in (0x2028, 0x2029):
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _canonical(meta: Dict[str, str], entries: List[Tuple[str, str, List[int], Tuple[int, int]]]) -> bytes:
    """The header as Go marshals map[string]any{name: entry, "__metadata__": meta}."""
    items = {}
    for name, dtype, shape, (b, e) in entries:
        items[name] = '{"dtype":%s,"shape":[%s],"data_offsets":[%d,%d]}' % (
            go_json_str(dtype), ",".join(str(int(d)) for d in shape), b, e)
    if meta:
        items[METADATA_KEY] = "{" + ",".join(
            go_json_str(k) + ":" + go_json_str(meta[k]) for k in sorted(meta, key=lambda k: k.encode())) + "}"
    return ("{" + ",".join(go_json_str(k) + ":" + items[k]
                           for k in sorted(items, key=lambda k: k.encode())) + "}").encode()


def encode(meta: Dict[str, str], tensors: List[Tuple[str, np.ndarray]]) -> bytes:
    """The bytes of a safetensors file holding tensors (name, array) in that
    order, with meta plus the vomc checksum."""
    if CHECKSUM_KEY in meta:
        raise ValueError(f"metadata key {CHECKSUM_KEY} is reserved for the checksum")
    entries, datas, off = [], [], 0
    for name, a in tensors:
        a = np.require(a, requirements="C")  # not ascontiguousarray: it makes a 0-d array 1-d
        if a.dtype == np.float32:
            dtype = "F32"
        elif a.dtype == np.float64:
            dtype = "F64"
        elif a.dtype == np.int64:
            dtype = "I64"
        else:
            raise ValueError(f"tensor {name}: dtype {a.dtype} not supported")
        raw = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        entries.append((name, dtype, list(a.shape), (off, off + len(raw))))
        datas.append(raw)
        off += len(raw)
    h = hashlib.sha256(_canonical(meta, entries))
    for d in datas:
        h.update(d)
    full = dict(meta)
    full[CHECKSUM_KEY] = h.hexdigest()
    header = _canonical(full, entries)
    header += b" " * ((8 - len(header) % 8) % 8)
    return struct.pack("<Q", len(header)) + header + b"".join(datas)


def write_atomic(path: str, data: bytes) -> None:
    """Write data to path atomically: a synced temporary ".NAME.tmp*" in the
    same directory renamed over path, then the directory synced (vomc's
    RemoveStaleTemp deletes such a temporary left by a killed process)."""
    d, base = os.path.split(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + base + ".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    dfd = os.open(d, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def save(path: str, meta: Dict[str, str], tensors: List[Tuple[str, np.ndarray]]) -> None:
    """encode and write_atomic."""
    write_atomic(path, encode(meta, tensors))


class FormatError(ValueError):
    """A file that is not a valid (or not an intact) safetensors file."""


def load(path: str, require_checksum: bool = True) -> Tuple[Dict[str, str], Dict[str, np.ndarray]]:
    """Read a safetensors file: (metadata without the checksum, {name: array}).
    The header is checked (known dtypes, shapes matching the data, offsets
    tiling the data section, nothing after it) and the checksum verified; a
    file without one is refused when require_checksum."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise FormatError(f"{path}: {len(raw)} bytes, too short for a safetensors file")
    (n,) = struct.unpack("<Q", raw[:8])
    if n > MAX_HEADER or n > len(raw) - 8:
        raise FormatError(f"{path}: header of {n} bytes in a file of {len(raw)} bytes (truncated or not safetensors)")
    try:
        header = json.loads(raw[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise FormatError(f"{path}: header: {e}") from None
    if not isinstance(header, dict):
        raise FormatError(f"{path}: header is not a JSON object")
    meta = dict(header.pop(METADATA_KEY, None) or {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        raise FormatError(f"{path}: metadata is not a string map")
    checksum = meta.pop(CHECKSUM_KEY, None)
    if checksum is None and require_checksum:
        raise FormatError(f"{path} has no {CHECKSUM_KEY} checksum: its integrity cannot be verified")
    data = raw[8 + n:]
    entries, arrays, end = [], {}, 0
    for name, e in sorted(header.items(), key=lambda kv: (kv[1].get("data_offsets", [0, 0]) if isinstance(kv[1], dict) else [0, 0], kv[0])):
        if not isinstance(e, dict) or set(e) != {"dtype", "shape", "data_offsets"}:
            raise FormatError(f"{path}: tensor {name}: bad entry {e!r}")
        dt = _DTYPES.get(e["dtype"])
        shape, (b, en) = e["shape"], e["data_offsets"]
        if dt is None or not all(isinstance(d, int) and d >= 0 for d in shape):
            raise FormatError(f"{path}: tensor {name}: dtype {e['dtype']} shape {shape} not supported")
        size = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        if b != end or en - b != size:
            raise FormatError(f"{path}: tensor {name}: data_offsets {[b, en]} do not tile the data section")
        if en > len(data):
            raise FormatError(f"{path}: tensor {name}: data_offsets {[b, en]} beyond the data section of {len(data)} bytes (truncated)")
        end = en
        entries.append((name, e["dtype"], shape, (b, en)))
        arrays[name] = np.frombuffer(data, dtype=dt, count=size // dt.itemsize, offset=b).reshape(shape)
    if end != len(data):
        raise FormatError(f"{path}: the header describes {8 + n + end} bytes, the file has {len(raw)}")
    if checksum is not None:
        h = hashlib.sha256(_canonical(meta, entries))
        h.update(data)
        if h.hexdigest() != checksum:
            raise FormatError(f"{path} is corrupt: its SHA-256 checksum does not match its contents")
    return meta, arrays
