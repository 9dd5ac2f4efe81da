return require('blink.cmp')
