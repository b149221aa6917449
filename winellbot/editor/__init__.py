"""The fine-grained editor (WINELL section 3.3): edit data, training, prediction and evaluation.

    revisions / dump / cited pages --data--> winell-editor/1 examples
    examples --train--> LoRA adapter + model card
    EditTask (never the target) --predict--> edited paragraph
    (examples, predictions) --evaluate--> token change, key facts, commentary, preserved, unsupported
"""
