"""PaperFields inside other evaluation harnesses (optional extras; nothing in core, extract or scoring imports them).

- :mod:`paperfields.integrations.inspect_task`: the ``paperfields/paperfields`` task for inspect_ai
  (``pip install -e '.[inspect]'``, then ``inspect eval paperfields/paperfields --model ...``);
- :mod:`paperfields.integrations.inspect_log`: an inspect eval log of that task turned into a run folder
  (``paperfields import-inspect LOG``).
"""
