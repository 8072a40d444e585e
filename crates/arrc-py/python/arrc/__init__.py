"""arrc: APL on the GPU from Python.

arrc compiles APL-style array programs to SPIR-V and runs them on Vulkan; NumPy arrays
go in and come out, and arrays a session computes stay on the device between calls::

    import arrc, numpy as np
    s = arrc.Session()
    s.eval('+/⍵', w=np.arange(10))          # array(45)
    s.eval('x←⍵×2', w=np.arange(5.0))       # x stays on the device
    s.eval('+/x')                           # array(20.)
    s.eval('⍺+⍵', a=1, w=[1, 2, 3])         # array([2, 3, 4])

Errors are :class:`AplError` (``args``: the class such as ``'LENGTH ERROR'``, the
message, the span in the text, the function it arose in).
"""

import numpy as np

from ._arrc import AplError, RawSession, version

__all__ = ["Session", "AplError", "version"]

# NumPy's dtypes as arrc's element types (narrower and unsigned integers widen).
_TO_ARRC = {
    np.dtype(np.bool_): ("bool", None),
    np.dtype(np.int8): ("i32", np.int32),
    np.dtype(np.uint8): ("i32", np.int32),
    np.dtype(np.int16): ("i32", np.int32),
    np.dtype(np.uint16): ("i32", np.int32),
    np.dtype(np.int32): ("i32", None),
    np.dtype(np.uint32): ("i64", np.int64),
    np.dtype(np.int64): ("i64", None),
    np.dtype(np.float16): ("f32", np.float32),
    np.dtype(np.float32): ("f32", None),
    np.dtype(np.float64): ("f64", None),
}

_FROM_ARRC = {
    "bool": np.bool_,
    "i32": np.int32,
    "i64": np.int64,
    "f32": np.float32,
    "f64": np.float64,
}


def _to_arrc(x):
    """A NumPy array (or anything np.asarray takes) as (type, shape, payload)."""
    if isinstance(x, str):
        return ("char", (len(x),) if len(x) != 1 else (), x)
    a = np.asarray(x)
    if a.dtype.kind == "U":
        text = "".join(a.ravel().tolist())
        if len(text) != a.size:
            raise ValueError("arrc takes strings of one character per item")
        return ("char", a.shape, text)
    if a.dtype == np.uint64:
        if a.size and a.max() > np.iinfo(np.int64).max:
            raise ValueError("a uint64 beyond 2**63-1 has no arrc type")
        a = a.astype(np.int64)
    if a.dtype not in _TO_ARRC:
        raise TypeError(f"arrc takes numbers, booleans and strings, not {a.dtype}")
    ty, cast = _TO_ARRC[a.dtype]
    if cast is not None:
        a = a.astype(cast)
    a = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False)
    return (ty, a.shape, a.tobytes())


def _from_arrc(t):
    """The NumPy array (str for a character vector, list for a nested array) of a
    (type, shape, payload) triple."""
    ty, shape, payload = t
    if ty == "char":
        if len(shape) <= 1:
            return payload
        return np.array(list(payload), dtype="<U1").reshape(shape)
    if ty == "mixed":
        items = [_from_arrc(i) for i in payload]
        if len(shape) == 1:
            return items
        out = np.empty(len(items), dtype=object)
        for i, item in enumerate(items):
            out[i] = item
        return out.reshape(shape)
    dt = np.dtype(_FROM_ARRC[ty]).newbyteorder("<")
    return np.frombuffer(payload, dtype=dt).reshape(shape).copy()


def _arguments(src, w, a):
    """`src` with its own ⍵ (and ⍺) read as the arrays given for them: each outside
    braces, quotes and comments names ⍙w (⍙a); those inside a dfn are its own."""
    out = []
    depth = 0
    quoted = comment = False
    for c in src:
        if comment:
            comment = c != "\n"
        elif quoted:
            quoted = c != "'"
        elif c == "'":
            quoted = True
        elif c == "⍝":
            comment = True
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0 and c == "⍵" and w:
            out.append(" ⍙w ")
            continue
        elif depth == 0 and c == "⍺" and a:
            out.append(" ⍙a ")
            continue
        out.append(c)
    return "".join(out)


class Session:
    """A workspace of arrays and functions. ``backend``: ``"auto"`` (Vulkan when a
    device exists, else the CPU reference), ``"vulkan"`` or ``"cpu"``; ``float``:
    ``"f32"`` (default) or ``"f64"``. One per thread."""

    def __init__(self, backend="auto", float="f32"):
        self._s = RawSession(backend, float)
        self.output = []
        self.notes = []

    def eval(self, src, w=None, a=None, **names):
        """Runs APL text and returns its value (None after an assignment). ``w`` and
        ``a`` are the text's ⍵ and ⍺ (``eval('+/⍵', w=x)``; a dfn in the text keeps
        its own); other keywords define names first. ``⎕←`` output goes to
        ``self.output``."""
        for name, value in names.items():
            self[name] = value
        if w is not None:
            self._s.set("⍙w", *_to_arrc(w))
        if a is not None:
            self._s.set("⍙a", *_to_arrc(a))
        if w is not None or a is not None:
            src = _arguments(src, w is not None, a is not None)
        value, shown, notes = self._s.eval(src)
        self.output += shown
        self.notes = notes
        return None if value is None else _from_arrc(value)

    def __setitem__(self, name, value):
        self._s.set(name, *_to_arrc(value))

    def __getitem__(self, name):
        t = self._s.get(name)
        if t is None:
            raise KeyError(name)
        return _from_arrc(t)

    @property
    def device(self):
        """The Vulkan device's name, or None on the CPU reference."""
        return self._s.device()

    def variables(self):
        """The workspace's array names."""
        return [n for n in self._s.variables() if not n.startswith("⍙")]
