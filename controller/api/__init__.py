"""The controller's HTTP routes: thin Flask blueprints over the controller's logic.

The desktop page and the CLI use the desktop API (instructions, apps, actions,
confirmations, settings, events); apps reach the model through the LLM routes
without ever seeing its key. Routes parse a request with the protocol models, call
plain objects (pipeline, supervisor, settings store) and return their answer.
"""
