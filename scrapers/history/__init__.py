"""History imports: public tracker files loaded as runs per (platform, day) with source `import:<format>`."""
