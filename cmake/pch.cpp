// Anchor of the DistIRPCH target (the precompiled header's owner).
