"""The `petstore` command: composition root and the chat / run faces."""
