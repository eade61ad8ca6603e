"""Bot faces: chat transports (Matrix first) below the shared bot core.

Chat SDKs (matrix-nio, slack_sdk, aiohttp) are imported only in this package; ``chat`` holds the
transport-neutral types and imports none of them.
"""
