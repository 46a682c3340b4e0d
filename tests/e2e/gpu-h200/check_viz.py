import pickle, sys, io, contextlib
import torch
from torch.cuda import _memory_viz as mv
for path in sys.argv[1:]:
    snap = pickle.load(open(path, "rb"))
    print(path, "segments", len(snap["segments"]), "traces", [len(t) for t in snap["device_traces"]])
    out = io.StringIO()
    print(mv.segsum(snap)[:600])
    html = mv.trace_plot(snap)
    print("trace_plot html bytes", len(html))
    html2 = mv.segment_plot(snap)
    print("segment_plot html bytes", len(html2))
    print(mv.memory(snap)[:300] if hasattr(mv, "memory") else "")
print("torch", torch.__version__)
