"""The retention pruner: prunes index entries beyond the retention matrix, hourly and on demand."""
