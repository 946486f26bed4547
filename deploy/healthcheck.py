"""Is the team deployment healthy? Asks the Dagster webserver's GraphQL API (standard library only).

    python deploy/healthcheck.py [http://127.0.0.1:3000]

Prints one line per required daemon and per code location, and exits 0 when every required daemon
has a recent heartbeat and every code location loaded, 1 otherwise, 2 when the webserver does not
answer. Run it after `systemctl start` or `docker compose up` (README, "Run it for a team").
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request

QUERY = """
{
  instance { daemonHealth { allDaemonStatuses { daemonType required healthy } } }
  workspaceOrError {
    __typename
    ... on Workspace {
      locationEntries {
        name
        loadStatus
        locationOrLoadError { __typename ... on PythonError { message } }
      }
    }
  }
}
"""


def health(url: str, timeout_s: float = 10.0) -> tuple[bool, list[str]]:
    """(healthy, one line per daemon and code location) from the webserver at `url`."""
    request = urllib.request.Request(
        url.rstrip("/") + "/graphql",
        data=json.dumps({"query": QUERY}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        data = json.load(response)["data"]
    lines, healthy = [], True
    for daemon in data["instance"]["daemonHealth"]["allDaemonStatuses"]:
        if not daemon["required"]:
            continue
        healthy &= bool(daemon["healthy"])
        lines.append(f"daemon {daemon['daemonType']}: {'healthy' if daemon['healthy'] else 'NOT healthy'}")
    entries = data["workspaceOrError"].get("locationEntries") or []
    if not entries:
        healthy = False
        lines.append("code location: none loaded (is the code server up? deploy/workspace.yaml)")
    for entry in entries:
        error = entry["locationOrLoadError"] or {}
        loaded = error.get("__typename") == "RepositoryLocation"
        healthy &= loaded
        state = "loaded" if loaded else f"NOT loaded ({entry['loadStatus']}): {error.get('message', '')}"
        lines.append(f"code location {entry['name']}: {state.strip()}")
    return healthy, lines


def main(argv: list[str]) -> int:
    url = argv[1] if len(argv) > 1 else "http://127.0.0.1:3000"
    try:
        healthy, lines = health(url)
    except (OSError, urllib.error.URLError, KeyError, ValueError) as error:
        print(f"{url}: no answer from the Dagster webserver ({error})")
        return 2
    print("\n".join(lines))
    print("healthy" if healthy else "NOT healthy")
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
