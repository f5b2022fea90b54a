"""luminos mcp, driven by the official Python MCP client (PyPI `mcp`, 2.x).

Lists the tools, then calls overview, directory and flags on a tree that
was investigated already, with no API key in the server's environment, and
checks each answer. Prints what it saw; exits non-zero on the first thing
that is not as it should be.

    python3 tests/mcp_client.py --luminos target/debug/luminos \
        --target TREE --cache CACHE_DIR [--directory src] [--severity concern]

`cargo test --test all -- --ignored python_client` investigates a fixture
against the mock Messages API and runs this script on it.
"""

import argparse
import asyncio
import json
import sys

from importlib.metadata import version

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOLS = ["investigate", "overview", "directory", "flags", "ask"]


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


def answer(result, tool):
    """The structured answer of a call that must have succeeded."""
    text = result.content[0].text if result.content else ""
    check(not result.is_error, f"{tool} failed: {text}")
    structured = result.structured_content
    check(isinstance(structured, dict), f"{tool}: no structured content")
    check(json.loads(text) == structured, f"{tool}: the text is not the same JSON")
    return structured


async def main(args):
    major = int(version("mcp").split(".")[0])
    check(major >= 2, f"the mcp package is {version('mcp')}, not 2.x")
    server = StdioServerParameters(
        command=args.luminos,
        args=["mcp"],
        # No key: the cache tools must not need one.
        env={"LUMINOS_CACHE_DIR": args.cache, "ANTHROPIC_API_KEY": ""},
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            info = init.server_info
            print(f"server: {info.name} {info.version}, protocol {init.protocol_version}")
            listed = await session.list_tools()
            names = [tool.name for tool in listed.tools]
            print(f"tools: {', '.join(names)}")
            check(names == TOOLS, f"tools are {names}")

            overview = answer(
                await session.call_tool("overview", {"target": args.target}), "overview"
            )
            status = overview["investigation"]["status"]
            coverage = overview["coverage"]
            print(
                f"overview: status {status}, {coverage['directories']} directories, "
                f"{len(overview['flags'])} flags, tree changed: "
                f"{overview['tree']['changed_since_investigated']}"
            )
            print(f"  brief: {overview['brief']}")
            check(overview["brief"], "overview: no brief")
            check(status in ("complete", "partial"), f"overview: status {status}")

            directory = answer(
                await session.call_tool(
                    "directory", {"target": args.target, "path": args.directory}
                ),
                "directory",
            )
            files = [file["path"] for file in directory["files"]]
            below = [sub["path"] for sub in directory["subdirectories"]]
            print(
                f"directory {directory['path']}: {directory['coverage']}, files {files}, "
                f"subdirectories {below}, {len(directory['flags'])} flags"
            )
            print(f"  summary: {directory['summary']}")
            check(directory["summary"], "directory: no summary")

            flags = answer(
                await session.call_tool(
                    "flags", {"target": args.target, "severity": args.severity}
                ),
                "flags",
            )
            print(f"flags at least {args.severity}: {len(flags['flags'])} of {flags['counts']}")
            for flag in flags["flags"]:
                print(f"  [{flag['severity']}] {flag['path']}: {flag['finding']}")

            missing = await session.call_tool(
                "directory", {"target": args.target, "path": "no/such/dir"}
            )
            check(missing.is_error, "directory: a missing path is not an error")
            print(f"a missing directory: isError, {missing.content[0].text}")
    print("ok")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--luminos", required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("--cache", required=True)
    parser.add_argument("--directory", default="src")
    parser.add_argument("--severity", default="concern")
    asyncio.run(main(parser.parse_args()))
