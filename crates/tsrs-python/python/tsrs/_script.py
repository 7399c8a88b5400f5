"""``tsrs.script``: compiles a Python function from its source, as ``torch.jit.script`` does.

The function's source (``inspect.getsource``) is compiled as TorchScript. Other Python
functions it calls by a global or closure name are compiled with it (recursively), so helpers
need no decorator; names of modules (``torch``, ``math``) are left to the TorchScript frontend.
"""

import ast
import inspect
import textwrap

from . import _tsrs


def _function_source(fn):
    """The dedented source of ``fn`` without decorators, and the names it reads."""
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as e:
        raise OSError(
            f"tsrs.script: cannot read the source of {fn.__qualname__} ({e}); "
            "define it in a file or use tsrs.compile(source)"
        ) from None
    tree = ast.parse(src)
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not defs:
        raise ValueError(f"tsrs.script: {fn.__qualname__} is not a def (lambdas cannot be scripted)")
    node = defs[0]
    lines = src.splitlines()
    # `lineno` is the `def` line; decorators come before it.
    body = "\n".join(lines[node.lineno - 1 :]) + "\n"
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return body, names


def _collect(fn, out, seen):
    """Appends the sources `fn` needs (dependencies first) to `out`."""
    if id(fn) in seen:
        return
    seen.add(id(fn))
    body, names = _function_source(fn)
    closure = inspect.getclosurevars(fn)
    scope = dict(closure.globals)
    scope.update(closure.nonlocals)
    for name in sorted(names):
        value = scope.get(name)
        if value is None or value is fn:
            continue
        if isinstance(value, _tsrs.ScriptFunction):
            src = value._source
            if src is not None and src not in out:
                out.append(src)
        elif inspect.isfunction(value):
            _collect(value, out, seen)
    if body not in out:
        out.append(body)


def script(obj):
    """Compiles a Python function (and the Python functions it calls) as TorchScript and
    returns a ``ScriptFunction``. Already-compiled functions and modules are returned as they
    are."""
    if isinstance(obj, (_tsrs.ScriptFunction, _tsrs.ScriptModule)):
        return obj
    from .nn import Module

    if isinstance(obj, Module):
        raise NotImplementedError(
            "tsrs.script of a tsrs.nn.Module is not supported: use tsrs.trace(module, inputs)"
        )
    if not inspect.isfunction(obj):
        raise TypeError(f"tsrs.script takes a Python function, not {type(obj).__name__}")
    sources = []
    _collect(obj, sources, set())
    filename = inspect.getsourcefile(obj) or "<string>"
    cu = _tsrs.compile("\n\n".join(sources), filename)
    return cu.find_function(obj.__name__)
