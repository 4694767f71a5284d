"""labutil: the modeling core of the course 大规模GPU集群部署.

One module per concept; chapters and labs import from here and stay thin.

- ``units``       unit constants and conversions (decimal GB vs GiB, Gbit/s vs GB/s)
- ``validate``    argument checks with one error style (ValueError naming the parameter)
- ``hardware``    the hardware catalog (GPUs, NICs, switches, servers) read from ``labutil/data``
- ``exercises``   self-grading exercises used in every chapter
- ``widgets``     the Explorer: ipywidgets controls bound to a pure model, redrawing a figure
- ``plotting``    shared figure style
- ``coursemap``   the six modules, thirty chapters and their prerequisites
- ``nbtools``     build / check the chapter notebooks from their py:percent sources
"""

__version__ = "0.1.0"
