"""The configuration unit (isa.yaml unit CFG): SETC16, WRCFG, RDCFG, RMWCIB, CFGSHIFTMASK."""
