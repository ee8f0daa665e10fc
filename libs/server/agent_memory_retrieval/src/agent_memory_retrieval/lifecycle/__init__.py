"""The indexes' lifecycle: the retention matrix, the pruner's cleanup (and the write-time gate
that keeps the indexes to it), and the fading of topics."""
