"""The executor's tool sources (`base.ToolProvider`) and the one listing over them (`registry.ToolSource`)."""
