"""dspk as a SpikeInterface sorter.

Importing this module registers the sorter "dspk" with SpikeInterface (0.105), so that

    import dspk_spikeinterface
    from spikeinterface.sorters import run_sorter
    sorting = run_sorter("dspk", recording, folder="dspk_out", device="cpu")

sorts a recording with the dspk binary (found on PATH, in the environment variable DSPK_PATH, or given as
the parameter dspk_path). A recording that SpikeInterface already holds as a binary folder
(recording.save(format="binary")) is sorted where it lies; any other is first written as one under
FOLDER/dspk_recording (removed after the sort unless delete_recording_copy=False). dspk writes its
Phy/Kilosort folder to FOLDER/sorter_output; the sorting is read from it with read_kilosort, with the
units' labels (KSLabel, bc_label) and quality metrics (cluster_*.tsv, quality_metrics.tsv) as unit
properties. A recording of several segments is sorted as their concatenation, and the sorting is split
back into the segments. dspk's progress goes to FOLDER/sorter_output/dspk.log (the runtime trace of
spikeinterface_log.json) and, with verbose=True, to standard output; a failing run raises
SpikeSortingError with dspk's message.

Only the standard library and SpikeInterface are used.
"""

import csv
import json
import os
import shutil
import subprocess
from pathlib import Path

from spikeinterface.sorters.basesorter import BaseSorter, get_job_kwargs
from spikeinterface.sorters.utils import SpikeSortingError

# Sample types dspk reads from a binary folder; others are written as float32.
_DTYPES = ("int16", "uint16", "float32")
_COPY = "dspk_recording"  # the binary copy, under the run's folder
_SEGMENTS = "dspk_segments.json"  # samples per segment, to split the sorting


class DspkSorter(BaseSorter):
    """dspk, a Go reimplementation of Kilosort4's sort, run as an external binary."""

    sorter_name = "dspk"
    requires_locations = True
    gpu_capability = "nvidia-optional"
    requires_binary_data = True
    handle_multi_segment = True

    _default_params = {
        "device": "auto",
        "nblocks": 1,
        "Th_universal": 9.0,
        "Th_learned": 8.0,
        "registration": "kilosort",
        "correction": "auto",
        "do_CAR": True,
        "invert_sign": False,
        "highpass_cutoff": 300.0,
        "batch_size": 60000,
        "nskip": 25,
        "seed": 1,
        "tmin": 0.0,
        "tmax": None,
        "groups": False,
        "scale": None,
        "extra_args": [],
        "dspk_path": None,
        "keep_good_only": False,
        "delete_recording_copy": True,
    }

    _params_description = {
        "device": "Compute device: 'auto' (the first CUDA GPU, else the CPU), 'cpu' or 'cuda:N'. (dspk -device)",
        "nblocks": "Motion correction: 0 none, 1 one rigid shift per window, k > 1 a shift per block of 2k - 1 "
        "half-overlapping blocks along the probe. (dspk -nblocks, Kilosort4's nblocks)",
        "Th_universal": "Detection threshold of the universal templates in whitened SD. (dspk -Th_universal)",
        "Th_learned": "Threshold of learned-template matching in whitened SD. (dspk -Th_learned)",
        "registration": "How the motion estimate registers the windows: 'kilosort' (Kilosort4's, to one reference) "
        "or 'pairwise' (every pair of windows within 300 s, solved together). (dspk -registration)",
        "correction": "How windows are corrected: 'kilosort' (Kilosort4's kriging), 'smooth' or 'auto'. (dspk -correction)",
        "do_CAR": "If True, subtract the common average reference. (dspk -no-car when False)",
        "invert_sign": "If True, flip the sign of the data. (dspk -invert)",
        "highpass_cutoff": "High-pass cut-off in Hz. (dspk -highpass)",
        "batch_size": "Samples owned by each window. (dspk -batch, Kilosort4's batch_size)",
        "nskip": "Use every nskip-th window for whitening and template learning. (dspk -nskip)",
        "seed": "Seed of template learning. (dspk -seed)",
        "tmin": "Start of the data sorted, in seconds from the first sample of the first segment. (dspk -tmin)",
        "tmax": "End of the data sorted, in seconds; None for the end. (dspk -tmax)",
        "groups": "If True, detect each channel group (shank, tetrode) on its own. (dspk -groups)",
        "scale": "int16 counts per stored unit of float32 data; None for 0.1 uV per count (from the gains). (dspk -scale)",
        "extra_args": "More dspk sort flags, as a list of strings, e.g. ['-nearest_templates', '50'].",
        "dspk_path": "Path of the dspk binary; None for DSPK_PATH, else dspk on PATH.",
        "keep_good_only": "If True, only units labelled 'good' (KSLabel) are returned.",
        "delete_recording_copy": "If True, the binary copy of a recording that was not a binary folder is removed "
        "after the sort (params.py then names a missing file).",
    }

    sorter_description = """dspk sorts extracellular recordings as Kilosort4 does (whitening, universal-template
    detection, drift correction, template learning and matching, graph clustering, curation), in Go, on the CPU
    or a CUDA GPU, and writes a Phy/Kilosort folder with quality metrics."""

    installation_mesg = """\nPut the dspk binary on PATH, set DSPK_PATH to it, or give run_sorter(..., dspk_path=...).
    Build it from the dspk repository with: go build -o dspk ./cmd/dspk\n"""

    # True while BaseSorter.initialize_folder runs: the binary may then be given as the parameter
    # dspk_path, which the folder check cannot see, so it is looked for when the sort starts.
    _in_initialize = False

    @classmethod
    def is_installed(cls):
        return cls._in_initialize or _find_binary(None) is not None

    @classmethod
    def get_sorter_version(cls):
        exe = _find_binary(None)
        if exe is None:
            return "unknown"
        out = subprocess.run([exe, "version"], capture_output=True, text=True, check=False).stdout.split()
        return out[1] if len(out) > 1 else "unknown"

    @classmethod
    def initialize_folder(cls, recording, output_folder, verbose, remove_existing_folder):
        cls._in_initialize = True
        try:
            return super().initialize_folder(recording, output_folder, verbose, remove_existing_folder)
        finally:
            cls._in_initialize = False

    @classmethod
    def use_gpu(cls, params):
        return params.get("device", "auto") != "cpu"

    @classmethod
    def _check_apply_filter_in_params(cls, params):
        return True  # dspk always high-pass filters

    @classmethod
    def _setup_recording(cls, recording, sorter_output_folder, params, verbose):
        output_folder = Path(sorter_output_folder).parent
        samples = [recording.get_num_samples(segment_index=s) for s in range(recording.get_num_segments())]
        (output_folder / _SEGMENTS).write_text(json.dumps({"samples": samples}))
        if _binary_folder(recording) is not None:
            return
        dtype = str(recording.get_dtype())
        recording.save(
            folder=output_folder / _COPY,
            format="binary",
            dtype=dtype if dtype in _DTYPES else "float32",
            verbose=verbose,
            **get_job_kwargs(params, verbose),
        )

    @classmethod
    def _run_from_folder(cls, sorter_output_folder, params, verbose):
        sorter_output_folder = Path(sorter_output_folder).absolute()
        output_folder = sorter_output_folder.parent
        exe = _find_binary(params.get("dspk_path"))
        if exe is None:
            raise SpikeSortingError(f"dspk: no binary found (dspk_path, DSPK_PATH, PATH).{cls.installation_mesg}")
        data = output_folder / _COPY
        if not (data / "binary.json").is_file():
            recording = cls.load_recording_from_folder(output_folder, with_warnings=False)
            data = _binary_folder(recording) if recording is not None else None
            if data is None:
                raise SpikeSortingError(f"dspk: no binary folder of the recording in {output_folder}")
        # dspk creates its output folder itself, complete or not at all.
        if sorter_output_folder.is_dir() and not any(sorter_output_folder.iterdir()):
            sorter_output_folder.rmdir()
        cmd = [exe, "sort", "-o", str(sorter_output_folder)] + _flags(params) + [str(data)]
        log = [" ".join(cmd)]
        if verbose:
            print(log[0], flush=True)
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1) as proc:
            for line in proc.stdout:
                line = line.rstrip("\n")
                log.append(line)
                if verbose:
                    print(line, flush=True)
        sorter_output_folder.mkdir(exist_ok=True)
        (sorter_output_folder / f"{cls.sorter_name}.log").write_text("\n".join(log) + "\n")
        if proc.returncode != 0:
            tail = "\n".join(log[-20:])
            raise SpikeSortingError(f"dspk sort exited with status {proc.returncode}:\n{tail}")
        if params.get("delete_recording_copy", True) and (output_folder / _COPY).is_dir():
            shutil.rmtree(output_folder / _COPY)

    @classmethod
    def _get_result_from_folder(cls, sorter_output_folder):
        from spikeinterface.core import split_sorting, NumpyRecording
        from spikeinterface.extractors import read_kilosort
        import numpy as np

        sorter_output_folder = Path(sorter_output_folder)
        output_folder = sorter_output_folder.parent
        with open(output_folder / "spikeinterface_params.json") as f:
            params = json.load(f)["sorter_params"]
        sorting = read_kilosort(sorter_output_folder, keep_good_only=params.get("keep_good_only", False))
        _drop_repeats(sorting)
        _add_quality_metrics(sorting, sorter_output_folder / "quality_metrics.tsv")
        segments = output_folder / _SEGMENTS
        if segments.is_file():
            samples = json.loads(segments.read_text())["samples"]
            if len(samples) > 1:
                # Lengths only: empty traces of each segment's length stand for the recording.
                shapes = [np.zeros((n, 1), dtype="int8") for n in samples]
                sorting = split_sorting(sorting, [NumpyRecording(shapes, sorting.sampling_frequency)])
        return sorting


def _find_binary(path):
    """The dspk binary: path, else DSPK_PATH, else dspk on PATH (None if none is executable)."""
    for p in (path, os.environ.get("DSPK_PATH")):
        if p:
            return str(p) if os.path.isfile(p) and os.access(p, os.X_OK) else None
    return shutil.which("dspk")


def _binary_folder(recording):
    """The folder of a recording SpikeInterface holds as a binary folder whose samples dspk reads, else None."""
    from spikeinterface.core.binaryfolder import BinaryFolderRecording

    if not isinstance(recording, BinaryFolderRecording):
        return None
    d = recording.get_binary_description()
    if d["time_axis"] != 0 or str(d["dtype"]) not in _DTYPES:
        return None
    return Path(recording._kwargs["folder_path"])


def _flags(p):
    """dspk sort's flags for the sorter parameters p."""
    f = ["-device", str(p["device"]), "-nblocks", str(int(p["nblocks"])),
         "-Th_universal", repr(float(p["Th_universal"])), "-Th_learned", repr(float(p["Th_learned"])),
         "-registration", str(p["registration"]), "-correction", str(p["correction"]),
         "-highpass", repr(float(p["highpass_cutoff"])), "-batch", str(int(p["batch_size"])),
         "-nskip", str(int(p["nskip"])), "-seed", str(int(p["seed"])), "-tmin", repr(float(p["tmin"]))]
    if p["tmax"] is not None:
        f += ["-tmax", repr(float(p["tmax"]))]
    if not p["do_CAR"]:
        f.append("-no-car")
    if p["invert_sign"]:
        f.append("-invert")
    if p["groups"]:
        f.append("-groups")
    if p["scale"] is not None:
        f += ["-scale", repr(float(p["scale"]))]
    return f + [str(a) for a in p["extra_args"]]


def _drop_repeats(sorting):
    """Removes the copies read_kilosort makes of a column found in two tables (cluster_group.tsv repeats KSLabel)."""
    import numpy as np

    for key in list(sorting.get_property_keys()):
        base = key[: -len("_repeat")]
        if key.endswith("_repeat") and base in sorting.get_property_keys():
            if np.array_equal(sorting.get_property(key).astype(str), sorting.get_property(base).astype(str)):
                sorting.delete_property(key)


def _add_quality_metrics(sorting, path):
    """Sets the columns of quality_metrics.tsv that are not yet unit properties (numbers as floats)."""
    if not path.is_file():
        return
    with open(path, newline="") as f:
        rows = {r["unit_id"]: r for r in csv.DictReader(f, delimiter="\t")}
    keys = sorting.get_property_keys()
    ids = sorting.get_property("original_cluster_id") if "original_cluster_id" in keys else sorting.unit_ids
    ids = [str(u) for u in ids]
    if not rows or any(u not in rows for u in ids):
        return
    for col in next(iter(rows.values())):
        if col == "unit_id" or col in sorting.get_property_keys():
            continue
        vals = [rows[u][col] for u in ids]
        try:
            sorting.set_property(col, [float(v) for v in vals])
        except ValueError:
            sorting.set_property(col, vals)


def register():
    """Adds DspkSorter to SpikeInterface's sorter lists (again, harmlessly, if it is there)."""
    from spikeinterface.sorters import sorterlist

    if DspkSorter not in sorterlist.sorter_full_list:
        sorterlist.sorter_full_list.append(DspkSorter)
    sorterlist.sorter_dict[DspkSorter.sorter_name] = DspkSorter


register()
