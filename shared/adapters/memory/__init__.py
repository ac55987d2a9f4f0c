"""In-process adapters of the ports: the one-process engine runs the stages' own handlers over
these, so `treerag ask` and the services answer through the same code."""
