"""``/v1/topics*``: the topic graph the topics service writes, read with importance computed now."""
