"""PerfFlowAspect's Python interface on the perfflow runtime.

``import perfflowaspect.aspect`` gives ``critical_path``, ``sync_event`` and
``async_event`` as PerfFlowAspect documents them; the events go to the
trace file named by PERFFLOW_OPTIONS, shared with any woven C/C++ code in
the process.
"""
