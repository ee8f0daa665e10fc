"""The foundation every layer above uses: the error family, logging, settings, process tuning,
metrics and traces."""
