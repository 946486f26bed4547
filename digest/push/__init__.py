"""Push channels: the digest's news and fired watches sent to chat bots and webhooks (GPUPLAN_NOTIFY)."""
