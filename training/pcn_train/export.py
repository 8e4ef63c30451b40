"""Writes a network as pcn's model directory (docs/model-format.md): model.safetensors
(written here byte by byte, no extra package), model.json and golden vectors in the layout
of ../shared/pcn/models/*/golden.safetensors (README §9: input, policy_logits,
policy_softmax, value or blackV/whiteV logits and expectations)."""

import json
import os
import struct

import numpy as np
import torch

FORMAT_VERSION = "pcn-neutral-v1"


def write_safetensors(path, tensors, metadata):
    """tensors: ordered dict name -> float32 ndarray; metadata: dict of strings."""
    header = {"__metadata__": {k: str(v) for k, v in metadata.items()}}
    off = 0
    blobs = []
    for name, arr in tensors.items():
        a = np.ascontiguousarray(arr, dtype="<f4")
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [off, off + a.nbytes]}
        off += a.nbytes
        blobs.append(a.tobytes())
    js = json.dumps(header, separators=(",", ":")).encode()
    js += b" " * ((8 - len(js) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(js)))
        f.write(js)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def read_safetensors(path):
    """The float32 tensors of a file that write_safetensors wrote: dict name -> ndarray."""
    with open(path, "rb") as f:
        (hl,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(hl))
        blob = f.read()
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        if meta["dtype"] != "F32":
            raise ValueError(f"{path}: {name} is {meta['dtype']}, not F32")
        a, b = meta["data_offsets"]
        out[name] = np.frombuffer(blob[a:b], dtype="<f4").reshape(meta["shape"])
    return out


def model_tensors(net):
    """The exported tensors: every parameter and BN running statistic, float32."""
    out = {}
    for k, v in net.state_dict().items():
        if k.endswith("num_batches_tracked"):
            continue
        out[k] = v.detach().cpu().float().numpy()
    return out


def export(net, out_dir, name, notes=None, golden_inputs=None):
    """Writes model.safetensors, model.json and (given inputs [B,P,N,N]) golden.*."""
    os.makedirs(out_dir, exist_ok=True)
    c = net.cfg
    bins = c["bins"] if c["kind"] == "pcn" else 0
    meta = {
        "format": FORMAT_VERSION, "game": c["game"], "kind": c["kind"],
        "board_size": c["board_size"], "input_planes": c["planes"], "actions": c["actions"],
        "value_bins": bins, "model": name,
    }
    write_safetensors(os.path.join(out_dir, "model.safetensors"), model_tensors(net), meta)
    desc = {
        "name": name, "game": c["game"], "board_size": c["board_size"], "kind": c["kind"],
        "value_bins": bins, "input": {"planes": c["planes"]},
        "actions": {"size": c["actions"]},
        "trunk": {"blocks": c["blocks"], "filters": c["filters"], "bn_eps": 1e-5},
        "producer": "pcn training/ (pcn_train.export)",
    }
    if notes:
        desc["training"] = notes
    tmp = os.path.join(out_dir, "model.json.tmp")
    with open(tmp, "w") as f:
        json.dump(desc, f, indent=1)
        f.write("\n")
    os.replace(tmp, os.path.join(out_dir, "model.json"))
    if golden_inputs is not None:
        write_golden(net, out_dir, golden_inputs)


def write_golden(net, out_dir, inputs):
    """golden.safetensors + golden.json: the network's outputs on `inputs` (eval mode, f32)."""
    net.eval()
    x = torch.as_tensor(np.asarray(inputs, dtype=np.float32))
    with torch.no_grad():
        outs = net(x)
    t = {"input": x.numpy(), "policy_logits": outs[0].numpy(),
         "policy_softmax": torch.softmax(outs[0], 1).numpy()}
    if net.cfg["kind"] == "pcn":
        j = torch.arange(net.cfg["bins"], dtype=torch.float64)
        for name, o in (("blackV", outs[1]), ("whiteV", outs[2])):
            t[f"{name}_logits"] = o.numpy()
            p = torch.softmax(o.double(), 1)
            t[f"{name}_expected"] = (p * j).sum(1).float().numpy()
    else:
        t["value"] = outs[1].numpy()
    write_safetensors(os.path.join(out_dir, "golden.safetensors"), t,
                      {"format": "pcn-golden", "producer": "pcn_train.export"})
    with open(os.path.join(out_dir, "golden.json"), "w") as f:
        json.dump({"positions": int(x.shape[0]), "source": "self-play records"}, f)
        f.write("\n")
