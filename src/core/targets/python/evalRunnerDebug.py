"""Eval Runner's Debug Trace for a Python function: one prompt, under the editor's debugger (debugpy).

Started as: python evalRunnerDebug.py REQUEST ANSWER FILE FUNCTION. REQUEST holds one request line of the worker
protocol (the prompt travels in that file, never in argv); the reply line is written to ANSWER. The user's module is
loaded and called exactly as the run's shim (evalRunnerShim.py, beside this file) does it.
"""
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evalRunnerShim as shim  # noqa: E402 - beside this file, found through the line above

sys.path.pop(0)


def _write(path, message):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(message, out, ensure_ascii=False)


def main():
    if len(sys.argv) < 5:
        print("usage: evalRunnerDebug.py REQUEST ANSWER FILE FUNCTION", file=sys.stderr)
        return 2
    request_path, answer_path, file, name = sys.argv[1:5]
    with open(request_path, encoding="utf-8") as f:
        request = json.load(f)
    try:
        fn = shim._load(file, name)
    except BaseException as error:  # noqa: B902 - any failure to import is reported, SystemExit included
        traceback.print_exc()
        _write(answer_path, {"fatal": "".join(traceback.format_exception_only(type(error), error)).strip().splitlines()[-1]})
        return 3
    call = shim._Caller(fn)
    try:
        message = shim._answer_batch(call, request) if "batch" in request else shim._answer_one(call, request)
    except Exception as error:  # the user's function raised: that is the trace's answer, as in a run
        # The traceback from the user's first frame, as in a run: this file's frame goes first, then the shim's.
        error.with_traceback(error.__traceback__.tb_next)
        message = {"id": request.get("id"), "error": "%s: %s" % (type(error).__name__, error), "traceback": shim._user_traceback(error)}
    _write(answer_path, message)
    return 0


if __name__ == "__main__":
    sys.exit(main())
