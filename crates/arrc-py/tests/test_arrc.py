"""The Python package: NumPy arrays in and out of a session on the Vulkan device
(lavapipe in CI), values as Dyalog gives them, errors as AplError."""

import numpy as np
import pytest

import arrc


@pytest.fixture
def s():
    return arrc.Session(backend="vulkan")


def test_runs_on_the_device(s):
    assert s.device is not None
    r = s.eval("+/⍵", w=np.arange(10))
    assert r.shape == () and r == 45


def test_types_come_back_exactly(s):
    for x in [
        np.arange(7, dtype=np.int32),
        np.array([2**40, -3], dtype=np.int64),
        np.linspace(0, 1, 5, dtype=np.float32),
        np.array([True, False, True]),
        np.arange(24, dtype=np.float32).reshape(2, 3, 4),
    ]:
        r = s.eval("⍵", w=x)
        assert r.dtype == x.dtype and r.shape == x.shape
        assert np.array_equal(r, x)
    f64 = arrc.Session(backend="vulkan", float="f64")
    x = np.array([0.1, 1e300, -2.5])
    assert np.array_equal(f64.eval("⍵", w=x), x)


def test_arrays_stay_in_the_workspace(s):
    s.eval("x←⍵×2", w=np.arange(5.0, dtype=np.float32))
    assert "x" in s.variables()
    assert s.eval("+/x") == 20
    s["y"] = np.ones((2, 3), dtype=np.int32)
    assert np.array_equal(s.eval("+⌿y"), [2, 2, 2])
    assert np.array_equal(s["x"], [0, 2, 4, 6, 8])
    assert np.array_equal(s.eval("⍺+⍵", a=1, w=[1, 2, 3]), [2, 3, 4])
    # A dfn in the text keeps its own ⍵.
    assert s.eval("{⍵×⍵}¨⍵ ⍝ ⍵", w=np.arange(4)).tolist() == [0, 1, 4, 9]


def test_characters_and_nested_results():
    # Characters and nested arrays run on the CPU reference (the default backend
    # hands them over, with a note).
    s = arrc.Session()
    assert s.eval("⌽⍵", w="abc") == "cba"
    assert s.eval("⍴⍵", w="hello").tolist() == [5]
    r = s.eval("(1 2)(3 4 5)")
    assert [x.tolist() for x in r] == [[1, 2], [3, 4, 5]]
    # Nested results of any rank: arrays of objects, item by item.
    r = s.eval("⊂⍳3")
    assert r.shape == () and r.item().tolist() == [1, 2, 3]
    r = s.eval("2 2⍴⊂1 2")
    assert r.shape == (2, 2) and r[1, 0].tolist() == [1, 2]
    # ⍵ next to a name stays a name of its own.
    s.eval("f←{⍵+1}")
    assert s.eval("f⍵", w=2) == 3
    s.eval("⎕←'hi'")
    assert s.output[-1] == "hi"


def test_errors_are_apl_errors(s):
    with pytest.raises(arrc.AplError) as e:
        s.eval("1 2+1 2 3")
    assert e.value.args[0] == "LENGTH ERROR"
    with pytest.raises(TypeError):
        s.eval("⍵", w=np.array([1 + 2j]))
    with pytest.raises(ValueError):
        s.eval("⍵", w=np.array([np.nan], dtype=np.float32))
