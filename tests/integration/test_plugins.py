"""Extensions from outside the package (reasonlab.plugins): the example plugin's task and study
run from a temporary folder through the CLI, its claims reach `reasonlab claims` and the site;
attention kinds and inits register from a plugin module; entry points load on a registry miss;
a clash with a built-in name or a broken plugin is one error line and leaves nothing registered."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from reasonlab import plugins
from reasonlab.cli import main
from reasonlab.errors import PluginError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugin" / "sensitivity"
STUDY = "sensitivity-majority-parity"


@pytest.fixture
def plugin_env(isolated_plugins, monkeypatch):
    monkeypatch.setenv(plugins.ENV, "")  # whatever the test sets is undone after it


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    return err


def test_the_example_plugin_runs_through_the_cli_into_claims_and_the_site(tmp_path, plugin_env,
                                                                         capsys):
    folder = tmp_path / "plugins"
    shutil.copytree(EXAMPLE, folder / "sensitivity")
    store = tmp_path / "store"
    # --include after the subcommand (it also sets REASONLAB_PLUGINS for the worker processes
    # a command starts: test_a_lookup_in_a_fresh_process_loads_reasonlab_plugins)
    assert main(["run", STUDY, "--scale", "smoke", "--store", str(store), "--workers", "1",
                 "--quiet", "--include", str(folder)]) == 0
    assert str(folder) in plugins.env_paths()[0].as_posix()
    out = capsys.readouterr().out
    verdicts = json.loads((store / STUDY / "smoke" / "verdicts.json").read_text())
    assert [v["claim"] for v in verdicts] == ["majority-easier"]
    assert verdicts[0]["status"].upper() in out and "final test accuracy" in out
    assert len(list((store / "runs").iterdir())) == 2  # the two arms, one seed

    assert main(["claims", "sensitivity", "--store", str(store)]) == 0
    ledger = capsys.readouterr().out
    assert ledger.startswith("Hahn 2020: Theoretical Limitations of Self-Attention")
    assert f"- {STUDY} / majority-easier: At equal size" in ledger
    assert f"smoke: {verdicts[0]['status']}" in ledger and "cpu: not run" in ledger

    pytest.importorskip("markdown_it")
    assert main(["site", "--store", str(store), "--out", str(tmp_path / "site")]) == 0
    index = (tmp_path / "site" / "index.html").read_text()
    assert "<h2>Hahn 2020: Theoretical Limitations of Self-Attention" in index
    assert f">{STUDY}</a>" in index and "majority of n bits more accurately" in index
    capsys.readouterr()

    # the plugin's task through `reasonlab data`, against the bits of each printed example
    assert main(["data", "bit_function", "n_bits=7", "function=parity", "--n", "20",
                 "--format", "jsonl"]) == 0
    for line in capsys.readouterr().out.splitlines():
        ex = json.loads(line)
        assert ex["labels"]["parity"] == str(ex["text"].count("1") % 2)


def test_a_clash_with_a_built_in_name_is_one_line_and_withdraws_the_plugin(tmp_path,
                                                                          plugin_env, capsys):
    from reasonlab.model.variants import ATTENTION
    from reasonlab.tasks import TASKS

    (tmp_path / "clashing.py").write_text(textwrap.dedent("""
        from reasonlab.model.attention import SoftmaxAttention
        from reasonlab.model.variants import ATTENTION
        from reasonlab.tasks.base import TASKS

        @ATTENTION.register("clashing_ok")
        class Fine(SoftmaxAttention):
            pass

        @TASKS.register("lego")
        class Lego:
            pass
        """))
    assert main(["--include", str(tmp_path / "clashing.py"), "studies"]) == 2
    err = one_error_line(capsys)
    assert "task 'lego' of clashing is a name reasonlab's own task uses (reasonlab.tasks.lego)" \
        in err and "clashing.py" in err and "rename it" in err
    assert "clashing_ok" not in ATTENTION and TASKS["lego"].__module__ == "reasonlab.tasks.lego"

    (tmp_path / "s" / "fam").mkdir(parents=True)  # a plugin study under a built-in's name
    (tmp_path / "s" / "fam" / "__init__.py").write_text(textwrap.dedent("""
        from reasonlab.studies.kit.base import STUDIES, Study

        @STUDIES.register("lego-probes")
        class Probes(Study):
            claims = ()
        """))
    with pytest.raises(PluginError, match="study 'lego-probes' of fam is a name reasonlab's"):
        plugins.include([tmp_path / "s"])
    shutil.copytree(EXAMPLE, tmp_path / "k" / "lego")  # a family under a built-in family's key
    with pytest.raises(PluginError, match="family package lego has the key 'lego' of "
                       "reasonlab's own family reasonlab.studies.lego; rename the package"):
        plugins.include([tmp_path / "k"])


def test_attention_and_init_from_a_plugin_module_build_and_run(tmp_path, plugin_env):
    (tmp_path / "variants_plugin.py").write_text(textwrap.dedent("""
        import torch
        from reasonlab.model.attention import SoftmaxAttention
        from reasonlab.model.variants import ATTENTION, INITS, VariantConfig

        @ATTENTION.register("uniform_plugin")
        class Uniform(SoftmaxAttention):
            def scores(self, q, k, x):  # every position alike
                return torch.zeros_like(super().scores(q, k, x))

        @INITS.register("constant_plugin")
        class Constant:
            class Config(VariantConfig):
                value: float = 0.01

            @staticmethod
            @torch.no_grad()
            def apply(model, config, generator=None):
                for p in model.parameters():
                    p.fill_(config.init.value)
        """))
    plugins.include([tmp_path / "variants_plugin.py"])
    from reasonlab.model import ModelConfig, Transformer, run_with_cache

    config = ModelConfig.build(dict(vocab_size=10, n_classes=3, max_seq_len=6, d_model=8,
                                    n_layers=1, n_heads=2, d_mlp=16),
                               attention="uniform_plugin",
                               init={"name": "constant_plugin", "value": 0.25})
    model = Transformer(config)
    assert all(torch.all(p == 0.25) for p in model.parameters())
    _, cache = run_with_cache(model, torch.randint(1, 10, (2, 6)))
    pattern = cache["blocks.0.attn.hook_pattern"]  # [batch, n_heads, q_pos, k_pos]
    torch.testing.assert_close(pattern, torch.full_like(pattern, 1 / 6))


def test_an_installed_entry_point_loads_on_a_registry_miss(tmp_path, plugin_env, monkeypatch):
    site = tmp_path / "site-packages"
    (site / "ep_plugin-0.1.dist-info").mkdir(parents=True)
    (site / "ep_plugin-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ep-plugin\nVersion: 0.1\n")
    (site / "ep_plugin-0.1.dist-info" / "entry_points.txt").write_text(
        "[reasonlab.plugins]\nep = ep_plugin:register\n")
    (site / "ep_plugin.py").write_text(textwrap.dedent("""
        from reasonlab.tasks.mlm import CORPORA

        def register():
            CORPORA.register("ep_corpus")(lambda *a, **k: None)
        """))
    monkeypatch.syspath_prepend(str(site))
    from reasonlab.tasks.mlm import CORPORA

    assert "ep_corpus" not in CORPORA
    assert CORPORA["ep_corpus"] is not None  # the miss imported the entry point and called it
    assert any(s.where.startswith("entry point ep = ep_plugin:register (ep-plugin 0.1)")
               for s in plugins.sources())


def test_a_broken_or_missing_plugin_is_one_line_naming_the_place(tmp_path, plugin_env, capsys):
    (tmp_path / "broken.py").write_text("from reasonlab.tasks import TASKS\n\n"
                                        "TASKS.register('broken_task')(object)\nundefined_name\n")
    assert main(["--include", str(tmp_path / "broken.py"), "studies"]) == 2
    err = one_error_line(capsys)
    assert "NameError" in err and f"{tmp_path / 'broken.py'}:4" in err
    from reasonlab.tasks import TASKS

    assert "broken_task" not in TASKS  # withdrawn with its plugin
    assert main(["--include", str(tmp_path / "nowhere"), "studies"]) == 2
    assert "no such file or folder" in one_error_line(capsys)
    assert main(["runs", "--include"]) == 2
    assert "--include needs a PATH" in one_error_line(capsys)
    (tmp_path / "empty").mkdir()
    assert main(["studies", "--include", str(tmp_path / "empty")]) == 2
    assert "holds no Python module" in one_error_line(capsys)


def test_a_lookup_in_a_fresh_process_loads_reasonlab_plugins(tmp_path, plugin_env, monkeypatch):
    """What a spawned worker does with a plugin's task: its environment names the plugin, and
    building the run's config misses in TASKS, which loads it."""
    (tmp_path / "tiny.py").write_text(textwrap.dedent("""
        from reasonlab.tasks.base import TASKS, TaskConfig

        class TinyConfig(TaskConfig):
            name: str = "tiny_task"
            size: int = 3

        @TASKS.register("tiny_task")
        class Tiny:
            Config = TinyConfig

            def __init__(self, config):
                self.config = config
        """))
    monkeypatch.setenv(plugins.ENV, str(tmp_path / "tiny.py"))
    from reasonlab.tasks.base import build_task

    assert build_task({"name": "tiny_task", "size": 5}).config.size == 5
    with pytest.raises(Exception, match="unknown task 'no_such_task'; choose one of: .*tiny_task"):
        build_task({"name": "no_such_task"})


def test_reasonlab_plugins_alone_reaches_every_command_and_the_studies_package(
        tmp_path, plugin_env, monkeypatch, capsys):
    """Without --include: the CLI loads REASONLAB_PLUGINS before the command, and a fresh
    process importing reasonlab.studies (a library user, a notebook) has the plugin studies."""
    shutil.copytree(EXAMPLE, tmp_path / "sensitivity")
    monkeypatch.setenv(plugins.ENV, str(tmp_path))
    assert main(["studies"]) == 0
    assert f"{STUDY}  (cpu: not measured; paper: not measured (for a GPU))" in capsys.readouterr(
        ).out
    src = Path(__file__).resolve().parents[2] / "src"
    p = subprocess.run([sys.executable, "-c", "import reasonlab.studies as s; "  # a listing,
                        f"print({STUDY!r} in s.STUDIES, s.STUDIES[{STUDY!r}].claims[0].key)"],
                       capture_output=True, text=True,  # not a lookup (which loads as well)
                       env={**os.environ, "PYTHONPATH": str(src)})
    assert (p.returncode, p.stdout) == (0, "True majority-easier\n"), p.stderr
