"""Eval Runner's Python worker: loads the user's module once, then answers JSON lines on stdin.

Started as: python eval_runner_shim.py FILE FUNCTION. Standard library only, Python 3.8 or later.
Protocol (docs/targets.md): {"ready": true} once the module is loaded, or {"fatal": "..."} when it cannot be;
then per request {"id", "prompt", "traceId", ...} in, {"id", "answer", "usage"?} or {"id", "error", "traceback"?} out.
A batch function (--batch-size) gets {"id", "batch": [{"prompt", "traceId", ...}, ...]}, is called once with
(prompts, contexts) and replies {"id", "answers": [{"answer", "usage"?} or {"error"}, ...]} in the same order, or
{"id", "error", "traceback"?} when it raised or returned no list; the runner checks the list's length.
Whatever the user's code prints goes to stderr, so it never breaks the protocol on stdout.
"""
import importlib.util
import inspect
import json
import os
import sys
import traceback


_SHIM = os.path.normcase(os.path.abspath(__file__))
# The event loop the shim runs an async function on: its frames sit between the shim's and the user's.
_LOOP = os.path.normcase(os.path.join(os.path.dirname(os.path.abspath(os.__file__)), "asyncio")) + os.sep


def _own_frame(frame):
    path = os.path.normcase(os.path.abspath(frame.filename))
    return path == _SHIM or path.startswith(_LOOP)


def _user_traceback(error):
    """The traceback of what the user's function raised, from the user's first frame on: the shim's own frames
    (and the event loop's) say nothing about the user's code. Chained causes are kept: they are the user's."""
    tb = traceback.TracebackException(type(error), error, error.__traceback__)
    frames = list(tb.stack)
    while frames and _own_frame(frames[0]):
        frames.pop(0)
    tb.stack = traceback.StackSummary.from_list(frames)
    return "".join(tb.format()).rstrip()


def _emit(out, message):
    out.write((json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8"))
    out.flush()


def _load(path, name):
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    module_name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError("cannot load %s as a Python module" % path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    fn = getattr(module, name, None)
    if fn is None or not callable(fn):
        raise AttributeError("%s has no function %r" % (os.path.basename(path), name))
    return fn


def _takes_context(fn):
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)


def _answer(result):
    if isinstance(result, str):
        return {"answer": result}
    if isinstance(result, dict) and isinstance(result.get("answer"), str):
        reply = {"answer": result["answer"]}
        if isinstance(result.get("usage"), dict):
            reply["usage"] = result["usage"]
        return reply
    return {"error": "the function returned %s, not a string or {'answer': str}" % type(result).__name__}


def _reply(request_id, result):
    return dict({"id": request_id}, **_answer(result))


def _context(request):
    return {k: request.get(k) for k in ("traceId", "evaluationId", "kind")}


class _Caller:
    """Calls the user's function with or without the context, awaiting it when it is async (one event loop, made once)."""

    def __init__(self, fn):
        self.fn = fn
        self.with_context = _takes_context(fn)
        self.loop = None
        if inspect.iscoroutinefunction(fn):
            self._new_loop()

    def _new_loop(self):
        import asyncio  # only for async functions: it costs start-up time

        self.loop = asyncio.new_event_loop()

    def __call__(self, prompt, context):
        result = self.fn(prompt, context) if self.with_context else self.fn(prompt)
        if inspect.isawaitable(result):
            if self.loop is None:
                self._new_loop()
            result = self.loop.run_until_complete(result)
        return result


def _answer_one(call, request):
    return _reply(request["id"], call(request["prompt"], _context(request)))


def _answer_batch(call, request):
    """One call for the whole batch; each item's answer apart, so one bad item fails only its own trace."""
    items = request["batch"]
    result = call([item["prompt"] for item in items], [_context(item) for item in items])
    if isinstance(result, tuple):
        result = list(result)
    if not isinstance(result, list):
        return {"id": request["id"], "error": "it returned %s, not a list of answers (one per prompt, in order)" % type(result).__name__}
    return {"id": request["id"], "answers": [_answer(item) for item in result]}


def main():
    out = sys.stdout.buffer
    # The user's prints go to stderr: stdout carries the protocol only.
    sys.stdout = sys.stderr
    if len(sys.argv) < 3:
        _emit(out, {"fatal": "usage: eval_runner_shim.py FILE FUNCTION"})
        return 2
    try:
        fn = _load(sys.argv[1], sys.argv[2])
    except BaseException as error:  # noqa: B902 - any failure to import is reported, SystemExit included
        traceback.print_exc()
        _emit(out, {"fatal": "".join(traceback.format_exception_only(type(error), error)).strip().splitlines()[-1]})
        return 3
    call = _Caller(fn)
    _emit(out, {"ready": True})
    for raw in sys.stdin.buffer:
        line = raw.decode("utf-8", "replace").strip()
        if not line:
            continue
        request_id = None
        try:
            request = json.loads(line)
            request_id = request["id"]
            message = _answer_batch(call, request) if "batch" in request else _answer_one(call, request)
        except Exception as error:  # the user's function failed on this prompt (or batch): that is its answer, the run goes on
            # One traceback per failure, in the reply (the trace's failure reason), not also on stderr (the log).
            message = {"id": request_id, "error": "%s: %s" % (type(error).__name__, error), "traceback": _user_traceback(error)}
        _emit(out, message)
    return 0


if __name__ == "__main__":
    sys.exit(main())
