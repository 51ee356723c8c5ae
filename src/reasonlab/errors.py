"""User-facing errors. The CLI prints `error: <message>` and exits 2 for any of these."""


class ReasonlabError(Exception):
    """A user error: bad config, unknown name, impossible size, unreadable file."""


class ConfigError(ReasonlabError):
    """A config value is unknown, missing or impossible."""


class CheckpointError(ReasonlabError):
    """A checkpoint is corrupt or does not match the run's config."""


class ParseError(ReasonlabError):
    """A task's readable text form could not be parsed or solved."""


class AssetError(ConfigError):
    """An offline asset (a corpus, pretrained weights) is not installed; says how to install."""


class PluginError(ConfigError):
    """A plugin (reasonlab.plugins) cannot be found or imported, or registers a name that is
    taken."""
