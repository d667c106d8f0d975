print("keel-example")
