"""One spider per platform: module name, spider `name` and fixture folder are all the platform slug."""
