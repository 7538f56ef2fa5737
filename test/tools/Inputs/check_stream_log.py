"""Checks a stand-in driver log (FAKE_CUDA_STREAMS) of
linformer-cuda-stream-probe: every launch and every run copy on the caller's
stream 1, no stream of the session's own, the caller's stream left for the
caller to destroy, and who waited: with device I/O only the caller ("device":
one sync of stream 1), with host I/O the runtime too ("host")."""
import sys

log, mode = sys.argv[1], sys.argv[2]
events = [line.split() for line in open(log) if line.strip()]


def fail(msg):
    sys.exit(f"{log}: {msg}")


streams = [e for e in events if e[0] == "stream"]
if streams != [["stream", "1"]]:
    fail(f"expected only the caller's stream 1, got {streams}")
launches = [i for i, e in enumerate(events) if e[0] == "launch"]
if not launches:
    fail("no launch")
for i in launches:
    if i + 1 >= len(events) or events[i + 1] != ["on", "1"]:
        fail(f"launch {' '.join(events[i][:2])} is not on the caller's stream")
syncs = [i for i, e in enumerate(events) if e == ["sync", "1"]]
if any(i < launches[-1] for i in syncs):
    fail("stream 1 was synchronized before the last launch")
if mode == "device" and len(syncs) != 1:
    fail(f"the runtime waited on the caller's stream ({len(syncs)} syncs, "
         "the caller's 1 expected)")
if mode == "host" and not syncs:
    fail("a run with host outputs returned without waiting")
if [e for e in events if e[0] == "destroy"] != [["destroy", "1"]]:
    fail("the caller's stream was destroyed by someone else, or twice")
print(f"OK: {len(launches)} launches on the caller's stream, "
      f"{len(syncs)} sync(s) of it ({mode})")
