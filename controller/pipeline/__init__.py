"""The controller's pipeline: an instruction through tasks and steps loops.

An instruction is routed into tasks; each task gets its injected context,
its app's reply, and, while the app plans, rounds of steps run by the executor,
until a final view. Opening an app and forwarding an action run the same loop;
admission bounds how much of that work runs or waits at once.
"""
