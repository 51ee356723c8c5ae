"""Paper scale on the paper's own backbone and data, offline: a study run at `--scale paper`
with `backbone=FOLDER` (a tiny GPT-2 that `transformers` writes here) and the paper's MNIST
and CIFAR-10 as Parquet in a Hub cache laid out here trains end to end on the CPU; without the
weights, `reasonlab run` names what it needs and where it looked, before anything trains."""

from __future__ import annotations

import json

import pytest

from reasonlab.cli import main

transformers = pytest.importorskip("transformers", reason="transformers not installed")
pytest.importorskip("pyarrow", reason="pyarrow not installed")

SHRINK = ["steps=2", "batch_size=4", "n_train=64", "n_test=16", "n_val=8", "eval_every=1",
          "ckpt_every=2", "eval_batch_size=16", "--device", "cpu", "--seeds", "1", "--quiet"]


def write_image_parquet(folder, column: str, shape, n: tuple[int, int]) -> None:
    """The Hub's layout of an image dataset: plain_text/{train,test}-*.parquet of PNG cells."""
    import io

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from PIL import Image

    def png(img):
        buf = io.BytesIO()
        Image.fromarray(img).save(buf, format="PNG")
        return buf.getvalue()

    rng = np.random.default_rng(0)
    (folder / "plain_text").mkdir(parents=True)
    for split, k in zip(("train", "test"), n, strict=True):
        x = rng.integers(0, 256, (k, *shape), dtype=np.uint8)
        pq.write_table(pa.table({column: [{"bytes": png(i), "path": None} for i in x],
                                 "label": rng.integers(0, 10, k).tolist()}),
                       folder / "plain_text" / f"{split}-00000-of-00001.parquet")


@pytest.fixture
def paper_data(tmp_path, monkeypatch):
    """MNIST and CIFAR-10 in the Hub cache's layout (Parquet, PNG cells), a tiny GPT-2."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no default ~/.cache/reasonlab folders
    for repo, column, shape in (("ylecun--mnist", "image", (28, 28)),
                                ("uoft-cs--cifar10", "img", (32, 32, 3))):
        write_image_parquet(tmp_path / "hub" / f"datasets--{repo}" / "snapshots" / "0", column,
                            shape, n=(80, 24))
    gpt2 = tmp_path / "tiny-gpt2"
    transformers.GPT2Model(transformers.GPT2Config(
        vocab_size=64, n_embd=16, n_layer=2, n_head=2, n_positions=600)).save_pretrained(gpt2)
    return gpt2


@pytest.mark.slow
def test_fpt_universal_paper_scale_trains_on_a_gpt2_folder(paper_data, tmp_path, capsys,
                                                           monkeypatch):
    from reasonlab.studies.fpt import common

    # the report's raw-input baselines fit one logistic regression per output slot: ~1000 on
    # paper bit memory, a minute and a half here, and tested in tests/unit/studies/fpt
    monkeypatch.setattr(common, "baselines", lambda config: dict.fromkeys(common.BASELINES,
                                                                          0.0))
    out = tmp_path / "out"
    assert main(["run", "fpt-universal", "--scale", "paper", f"backbone={paper_data}",
                 *SHRINK, "--out", str(out)]) == 0, capsys.readouterr().err
    study = json.loads(next((out / "fpt-universal").glob("paper-*/study.json")).read_text())
    configs = [json.loads((out / "runs" / r["id"] / "config.json").read_text())
               for r in study["runs"]]
    tasks = {c["task"]["name"] for c in configs}
    assert {"mnist", "cifar10", "bit_memory", "bit_xor", "listops"} <= tasks
    assert {c.get("init_from") for c in configs if c.get("init_from")} == {f"hf:{paper_data}"}
    assert all(c["model"]["d_model"] == 16 for c in configs if c["model"].get("arch") == "fpt"
               or c.get("init_from"))
    report = next((out / "fpt-universal").glob("paper-*/report.md")).read_text()
    assert f"hf:{paper_data}" in report and "stands in for the paper's GPT-2" in report


def test_paper_scale_without_the_weights_says_what_it_needs(paper_data, tmp_path, capsys):
    assert main(["run", "fpt-fitting", "--scale", "paper", *SHRINK,
                 "--out", str(tmp_path / "o")]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: study fpt-fitting at scale paper needs")
    assert "backbone gpt2: NOT FOUND" in err[0] and "models--openai-community--gpt2" in err[0]
    assert "nothing is downloaded" in err[0]
    assert not (tmp_path / "o" / "runs").exists()  # nothing trained, nothing written


def test_studies_scale_paper_lists_what_each_study_needs(paper_data, capsys, monkeypatch):
    from reasonlab import plan

    # the costs are test_run_overrides.py's (a minute of shape counting): only the listing here
    monkeypatch.setattr(plan, "study_cost", lambda configs, launches=True: plan.Cost(
        len(configs), 0.0))
    assert main(["studies", "--scale", "paper"]) == 0
    out = capsys.readouterr().out
    assert "- fpt-universal: backbone gpt2: NOT FOUND" in out
    assert "- fpt-universal: data cifar10: found" in out
    assert "- lego-pretraining: backbone bert-base-uncased: NOT FOUND" in out
    for study, backbone in (("fpt-backbones", "bert-base-uncased"),
                            ("fpt-backbones", "longformer-base-4096"),
                            ("fpt-vit", "vit-base-patch16-224")):
        assert f"- {study}: backbone {backbone}: NOT FOUND" in out


@pytest.mark.slow
def test_fpt_backbones_paper_scale_on_the_folders_given(paper_data, tmp_path, capsys):
    """Each row's folder from the command line (a bare path, a registry name): the rows run
    CIFAR-10, ListOps' 512 tokens exceed these 64-position checkpoints and its cells say '-',
    the T5 row says why it is not run, and the report names every backbone."""
    bert = tmp_path / "bert"
    transformers.BertModel(transformers.BertConfig(
        vocab_size=30, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64), add_pooling_layer=False
    ).save_pretrained(bert)
    out = tmp_path / "out"
    assert main(["run", "fpt-backbones", "--scale", "paper", "gpt2=tiny-gpt2", f"bert={bert}",
                 "longformer=tiny-longformer", *SHRINK, "--out", str(out)]) == 0, \
        capsys.readouterr().err
    [folder] = (out / "fpt-backbones").glob("paper-*")
    study = json.loads((folder / "study.json").read_text())
    configs = [json.loads((out / "runs" / r["id"] / "config.json").read_text())
               for r in study["runs"]]
    assert sorted(c["init_from"] for c in configs) == sorted(
        ["tiny-gpt2", f"hf:{bert}", "tiny-longformer"])
    assert {c["task"]["name"] for c in configs} == {"cifar10"}
    report = (folder / "report.md").read_text()
    assert f"BERT: hf:{bert}" in report and "T5: not run, T5's encoder adds" in report
    table = report.split("## Accuracy (%)")[1]
    assert "| model | CIFAR-10 |" in table  # no row ran ListOps
    for row in ("GPT-2", "BERT", "Longformer"):
        line = next(x for x in table.splitlines() if x.startswith(f"| {row} |"))
        assert line.split("|")[2].strip()[0].isdigit()  # CIFAR-10: an accuracy
    assert "| T5 | - (64.7) |" in table
    verdicts = json.loads((folder / "verdicts.json").read_text())
    assert [v["status"] for v in verdicts] == ["inconclusive"] * 2  # 1 seed, 2 steps
