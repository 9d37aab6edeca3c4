"""model_files.py - what the single-model export scripts (export_zoo_light.py, export_zoo_old.py) share:
the four files of an export and whether the ones on disk are already this recipe's.

The scripts run as `python3 models/NAME.py`, so models/ is on sys.path and `import model_files` finds this.
"""
import json
import os


def paths(out_dir, name):
    """NAME.onnx, NAME.input.bin, NAME.output.bin and NAME.json in out_dir, in that order."""
    base = os.path.join(out_dir, name)
    return [base + ext for ext in (".onnx", ".input.bin", ".output.bin", ".json")]


def up_to_date(files, seed, recipe):
    """True when every one of files (paths()'s list) exists and the JSON records this seed and recipe."""
    if not all(os.path.exists(f) for f in files):
        return False
    with open(files[3]) as f:
        meta = json.load(f)
    return meta.get("seed") == seed and meta.get("recipe") == recipe
