"""Starting and driving runners: one local runner process, over ssh, one per GPU, and on a
Dask cluster; which targets a command line names.
"""
