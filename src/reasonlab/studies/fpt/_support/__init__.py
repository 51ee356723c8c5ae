"""Support code of the FPT studies that is neither a study nor one of a family's fixed modules
(common, analysis, verdicts, paper, calibration): the backbone as a factor (backbone.py), the
slide-table studies' base and arms (slides.py), the freeze slides' arms and base (freezing.py),
FPT on other pretrained models (other_backbones.py), the first layer's attention maps
(first_layer.py), and the rules of the slide-table and other-backbone studies
(slide_verdicts.py, backbone_verdicts.py). Every other module of studies/fpt/ is one study,
named after it (fpt-init: init.py)."""
