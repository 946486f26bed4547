"""Model + method -> memory per GPU, GPU counts and throughput (pure Python, imports nothing of ours)."""
