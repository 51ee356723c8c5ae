import pytest
import torch


@pytest.fixture(autouse=True, scope="session")
def _own_cache(tmp_path_factory):
    """The listing texts and op counts (reasonlab/listing.py, plan.py OpCounts) that commands
    remember go to a folder of the test session's, never the user's cache; the texts shipped
    with the package are not read (tests of the cache see commands compute; the shipped texts'
    own test points REASONLAB_LISTINGS back at them)."""
    from reasonlab import listing

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(listing.ENV, str(tmp_path_factory.mktemp("cache")))
        mp.setenv(listing.SHIPPED_ENV, str(tmp_path_factory.mktemp("shipped") / "none.json"))
        yield


@pytest.fixture(autouse=True)
def _one_thread():
    # Tests compare runs bitwise; fix the thread count so reductions split the same way.
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture
def isolated_plugins(monkeypatch, tmp_path):
    """Plugins a test loads from its tmp_path (reasonlab.plugins) are forgotten afterwards: the
    registries' entries, their modules and the caches of their files, sys.path and
    REASONLAB_PLUGINS as they were."""
    import sys

    import reasonlab.studies  # noqa: F401  (every built-in registry exists before the snapshot)
    from reasonlab import plugins
    from reasonlab.registry import Registry

    monkeypatch.delenv(plugins.ENV, raising=False)
    saved = [(r, dict(r._entries), dict(r._origins)) for r in Registry.instances]
    path, loaded = list(sys.path), set(plugins._loaded)
    yield
    from reasonlab.studies.kit import calibration, claims, measured

    for r, entries, origins in saved:
        r._entries, r._origins = entries, origins
    root = f"{tmp_path.resolve()}/"
    for name, m in list(sys.modules.items()):
        if (getattr(m, "__file__", None) or "").startswith(root):
            del sys.modules[name]
    sys.path[:] = path
    plugins._loaded.clear()
    plugins._loaded.update(loaded)
    for cached in (claims.family_file, claims.family_claims, calibration._noise_file,
                   measured._measured):
        cached.cache_clear()
