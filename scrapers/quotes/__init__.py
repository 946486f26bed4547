"""The broker quotes file: its format, its checks, and prices as people write them."""
