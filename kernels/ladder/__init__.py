"""What a level is: the level type, the registry of levels, the Hopper entries, shapes.

Data only: nothing here touches the GPU, the files or the wire. Import the modules
(``ladder.registry``, ``ladder.level``, ``ladder.shape``); this face hands nothing on.
"""
